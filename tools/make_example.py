"""Build the example files in examples/ from scratch: a tiny byte-level BPE tokenizer.

    python -m tools.make_example          # rewrite examples/
    python -m tools.make_example --check  # exit 1 if examples/ differs from what this script makes

Trains a small BPE with Hugging Face `tokenizers` (a development dependency) on the text below,
writes it as an HF folder (`examples/tiny-bpe/`: tokenizer.json, tokenizer_config.json with a
ChatML chat template), and converts that folder with mtokspec's own converter to
`examples/tiny.mtok`, so the README's first command has a real file to inspect without a download.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples"

TEXT = """\
MNN runs large language models on phones and edge devices. A tokenizer turns text into ids and
ids back into text; the .mtok file carries everything the runtime needs: the normalizer, the
pre-tokenizer, the model with its vocabulary and merges, the decoder, the added tokens and the
chat template. The quick brown fox jumps over the lazy dog. Numbers like 2026, 3.14 and 42 appear
too, as do code snippets: for (int i = 0; i < n; ++i) { total += values[i]; } and print("hello").
Tokenizers split words into pieces: tokenization, tokenizer, tokens, token; encoding, decoding.
多语言文本也会出现：你好，世界！こんにちは。Привет, мир! Ça va très bien, merci. 😀🚀
"""

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
    " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def train_folder(folder: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=420, min_frequency=1, special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator([line for line in TEXT.splitlines() for _ in range(3)], trainer=trainer)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    config = {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
              "clean_up_tokenization_spaces": False, "chat_template": CHAT_TEMPLATE,
              "model_max_length": 2048, "tokenizer_class": "PreTrainedTokenizerFast"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")


def make(target: Path) -> None:
    import mtokspec
    from mtokspec.convert import from_hf

    train_folder(target / "tiny-bpe")
    result = from_hf(target / "tiny-bpe")
    (target / "tiny.mtok").write_bytes(mtokspec.build(result.tree))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with examples/ instead of writing")
    args = ap.parse_args(argv)
    if not args.check:
        make(OUT)
        print(f"wrote {OUT / 'tiny.mtok'} and {OUT / 'tiny-bpe'}/")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        make(Path(tmp))
        stale = [str(p.relative_to(tmp)) for p in sorted(Path(tmp).rglob("*")) if p.is_file()
                 and (not (OUT / p.relative_to(tmp)).exists()
                      or (OUT / p.relative_to(tmp)).read_bytes() != p.read_bytes())]
    if stale:
        print("examples/ is stale: " + ", ".join(stale))
        return 1
    print("examples/ is fresh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
