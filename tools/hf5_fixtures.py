"""Fixture folders for the header rules S1-S8 of ``mtokspec.convert.hf`` (transformers 5).

    python -m tools.hf5_fixtures            # write tests/fixtures/hf5/<name>/ (the model files)
    python -m tools.hf5_fixtures --record   # also run MNN's exporter on each and record its header

Recording needs ``transformers`` (5.24.0, the version the corpus was exported with) and MNN's
exporter source (``transformers/llm/export/utils/tokenizer.py``, read from a local mirror of
alibaba/MNN, ``--mnn-git``).  ``expected.json`` then holds the header the exporter wrote and the
SHA-256 of its whole ``.mtok``; ``tests/test_convert_hf5.py`` checks mtokspec against both.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "hf5"
MNN_GIT = Path("/work/.mirror/alibaba+MNN/repo")
EXPORTER = "transformers/llm/export/utils/tokenizer.py"


def _added(i: int, content: str, special: bool = True) -> dict:
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


_BOS_TEMPLATE = {"type": "TemplateProcessing",
                 "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                 "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                          {"Sequence": {"id": "B", "type_id": 1}}],
                 "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}

# a SentencePiece-style BPE (Llama): Metaspace, byte fallback, <unk> <s> </s> as added tokens
_SP = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [_added(0, "<unk>"), _added(1, "<s>"), _added(2, "</s>")],
    "normalizer": None,
    "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    "post_processor": None,
    "decoder": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
              "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3, "A": 4, "\u2581A": 5, "B": 6},
              "merges": [["\u2581", "A"]]},
}


def _sp(**changes) -> dict:
    doc = copy.deepcopy(_SP)
    doc.update(copy.deepcopy(changes))
    return doc


def _byte_fallback_doc() -> dict:
    doc = _sp(post_processor=_BOS_TEMPLATE)
    doc["model"]["vocab"] = {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3, "<0x41>": 4, "B": 5}
    doc["model"]["merges"] = []
    doc["model"]["unk_token"] = None
    return doc


def _byte_level_doc() -> dict:
    vocab = {"<s>": 0, "</s>": 1, "A": 2, "\u0120": 3, "\u0120A": 4}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [_added(0, "<s>"), _added(1, "</s>")], "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "post_processor": {**_BOS_TEMPLATE, "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}}},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab, "merges": [["\u0120", "A"]]}}


_BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]


def _gemma_doc() -> dict:
    """Gemma-like: every byte has a <0xNN> token (so the class's BPE never needs <unk>)."""
    doc = _sp()
    doc["model"]["vocab"] = {c: i for i, c in enumerate(["<unk>", "<s>", "</s>", "\u2581", "A", "\u2581A", "B",
                                                         *_BYTE_TOKENS])}
    return doc


def _llama_over_byte_level_doc() -> dict:
    """A byte-level tokenizer.json that a LlamaTokenizer class runs with its own Metaspace pipeline."""
    doc = _byte_level_doc()
    doc["model"]["vocab"] = {**doc["model"]["vocab"], "\u2581": 5, "\u2581A": 6}
    doc["model"]["merges"] = [["\u0120", "A"], ["\u2581", "A"]]
    return doc


def _gemma_turn_doc() -> dict:
    vocab = {c: i for i, c in enumerate(["<pad>", "<eos>", "<bos>", "a", "\u2581", "\u2581A", "A", *_BYTE_TOKENS])}
    doc = _sp(added_tokens=[_added(0, "<pad>"), _added(1, "<eos>"), _added(2, "<bos>"), _added(263, "<end_of_turn>")],
              pre_tokenizer=None, normalizer={"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"})
    doc["model"].update(vocab=vocab, merges=[], unk_token=None)
    doc["decoder"]["decoders"] = [d for d in doc["decoder"]["decoders"] if d["type"] != "ByteFallback"]
    return doc


FOLDERS: dict[str, tuple[str, dict[str, dict]]] = {
    "llama_template_bos": (
        "S5: the tokenizer.json template puts <s> before A; S8 finds the prefix [1]; S6/S7: the Llama class's "
        "own pipeline (no unknown token) encodes '<turn|>' as '▁' alone, a stop id",
        {"tokenizer.json": _sp(post_processor=_BOS_TEMPLATE),
         "tokenizer_config.json": {"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": True,
                                   "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}}),
    "llama_flags_without_template": (
        "S5: add_bos_token is dropped and the file has no post-processor: no BOS, no prefix "
        "(transformers 4 rebuilt [<s>] A from the flag)",
        {"tokenizer.json": _sp(),
         "tokenizer_config.json": {"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": True,
                                   "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}}),
    "codellama_forced_bos": (
        "S1/S5: CodeLlama passes add_bos_token=True itself (BOS template whatever the config says) and "
        "names its fill-in-the-middle tokens, which are added as new ids before the config's own *_token ones",
        {"tokenizer.json": _sp(),
         "tokenizer_config.json": {"image_token": "<image>", "tokenizer_class": "CodeLlamaTokenizer",
                                   "add_bos_token": False}}),
    "missing_special_tokens": (
        "S2: special tokens the config names but neither the vocabulary nor added_tokens holds are added "
        "with the next free ids, and listed",
        {"tokenizer.json": _sp(post_processor=_BOS_TEMPLATE),
         "tokenizer_config.json": {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>",
                                   "mask_token": "<mask>"}}),
    "special_in_vocabulary_only": (
        "S2: a special token the model vocabulary holds (not an added token) keeps its vocabulary id",
        {"tokenizer.json": _sp(),
         "tokenizer_config.json": {"bos_token": "B", "eos_token": "</s>", "sep_token": "\u2581A"}}),
    "model_specific_tokens": (
        "S1/S3: other *_token keys and extra_special_tokens become special tokens (new ids when unknown)",
        {"tokenizer.json": _sp(),
         "tokenizer_config.json": {"eos_token": "</s>", "image_token": "<image>", "video_token": "<s>",
                                   "extra_special_tokens": ["<x>", "</s>", "<y>"]}}),
    "special_tokens_map_read": (
        "S1: without added_tokens_decoder in the config, special_tokens_map.json overrides it",
        {"tokenizer.json": _sp(post_processor=_BOS_TEMPLATE),
         "tokenizer_config.json": {"bos_token": "</s>", "eos_token": "<s>"},
         "special_tokens_map.json": {"eos_token": {"content": "</s>", "lstrip": False, "rstrip": False,
                                                   "normalized": False, "single_word": False}}}),
    "special_tokens_map_ignored": (
        "S1: with added_tokens_decoder in the config, special_tokens_map.json is not read",
        {"tokenizer.json": _sp(post_processor=_BOS_TEMPLATE),
         "tokenizer_config.json": {"bos_token": "</s>", "eos_token": "<s>", "added_tokens_decoder": {}},
         "special_tokens_map.json": {"eos_token": "</s>", "additional_special_tokens": ["<extra>"]}}),
    "gemma_class_defaults": (
        "S1: GemmaTokenizer's defaults (<bos> <eos> <unk> <pad> <mask>) where the config names none",
        {"tokenizer.json": _gemma_doc(), "tokenizer_config.json": {"tokenizer_class": "GemmaTokenizer"}}),
    "llama_over_byte_level": (
        "S0: a Llama class over a tokenizer.json that mentions ByteLevel loads the plain backend: no class "
        "defaults (no <unk> added), the file's pipeline ('A' -> 'ĠA', which decodes to ' A': no prefix)",
        {"tokenizer.json": _llama_over_byte_level_doc(),
         "tokenizer_config.json": {"tokenizer_class": "LlamaTokenizerFast", "bos_token": "<s>", "eos_token": "</s>"}}),
    "qwen2_class_pipeline": (
        "S6/S8: Qwen2Tokenizer runs its own ByteLevel pipeline without the file's add_prefix_space: "
        "'A' stays 'A', which decodes to 'A', so the prefix is [0]",
        {"tokenizer.json": _byte_level_doc(),
         "tokenizer_config.json": {"tokenizer_class": "Qwen2Tokenizer", "bos_token": "<s>", "eos_token": "</s>"}}),
    "codellama_unk_unset": (
        "S7: CodeLlama's BPE gets str(unk_token) = 'None' when the config unsets it; encoding '<turn|>' "
        "then needs an unknown token the vocabulary lacks, HF raises, and the exporter skips the rule",
        {"tokenizer.json": _sp(), "tokenizer_config.json": {"tokenizer_class": "CodeLlamaTokenizer", "unk_token": None}}),
    "gemma_missing_byte_tokens": (
        "S6/S7: GemmaTokenizer's BPE spells '<turn|>' (no byte tokens) as one fused <unk>: one id, a stop id",
        {"tokenizer.json": _sp(), "tokenizer_config.json": {"tokenizer_class": "GemmaTokenizer"}}),
    "byte_fallback_prefix": (
        "S8: 'A' is only reachable through byte fallback (<0x41>): the runtime finds the prefix [1, 3] "
        "where the hand model found none",
        {"tokenizer.json": _byte_fallback_doc(),
         "tokenizer_config.json": {"bos_token": "<s>", "eos_token": "</s>"}}),
    "byte_level_prefix_space": (
        "S8: ByteLevel add_prefix_space (not stored, so the hand model answers): 'A' -> 'ĠA', prefix [0]",
        {"tokenizer.json": _byte_level_doc(),
         "tokenizer_config.json": {"bos_token": "<s>", "eos_token": "</s>"}}),
    "gemma_end_of_turn": (
        "S7: <end_of_turn> is a stop id only when encode gives [2, id]; without a template (transformers 5 "
        "drops add_bos_token) it gives [id]",
        {"tokenizer.json": _gemma_turn_doc(),
         "tokenizer_config.json": {"tokenizer_class": "GemmaTokenizer", "add_bos_token": True}}),
    "gemma_end_of_turn_template": (
        "S7: the same with a BOS template in tokenizer.json: [2, id], so id is a stop id",
        {"tokenizer.json": {**_gemma_turn_doc(), "post_processor": {
            **_BOS_TEMPLATE, "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                                        {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}}}},
         "tokenizer_config.json": {"tokenizer_class": "GemmaTokenizer"},
         "generation_config.json": {"eos_token_id": [1, 263]}}),
}


def write_folders(root: Path = FIXTURES) -> list[Path]:
    out = []
    for name, (rule, files) in FOLDERS.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for file_name, doc in files.items():
            (folder / file_name).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        (folder / "RULE.txt").write_text(rule + "\n", encoding="utf-8")
        out.append(folder)
    return out


def load_exporter(mnn_git: Path):
    """MNN's ``LlmTokenizer`` from the mirror's HEAD (needs transformers)."""
    source = subprocess.run(["git", "-C", str(mnn_git), "show", f"HEAD:{EXPORTER}"], check=True,
                            capture_output=True, text=True).stdout
    commit = subprocess.run(["git", "-C", str(mnn_git), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="mnn-exporter-")) / "mnn_exporter.py"
    tmp.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("mnn_exporter", tmp)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LlmTokenizer, commit


def exporter_bytes(llm_tokenizer, folder: Path, model_type: str = "llama") -> bytes:
    tok = llm_tokenizer(str(folder), model_type)
    with tempfile.TemporaryDirectory() as out:
        path = tok.export_mtok(out, os.path.join(folder, "tokenizer.json"))
        return Path(path).read_bytes()


def record(folders: list[Path], mnn_git: Path) -> None:
    import transformers

    import mtokspec
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    llm_tokenizer, commit = load_exporter(mnn_git)
    for folder in folders:
        data = exporter_bytes(llm_tokenizer, folder)
        header = mtokspec.parse(data).header
        expected = {"transformers_version": transformers.__version__, "mnn_commit": commit,
                    "special_count": len(header.special), "stop_count": len(header.stop),
                    "prefix_count": len(header.prefix), "ids": [*header.special, *header.stop, *header.prefix],
                    "mtok_sha256": hashlib.sha256(data).hexdigest()}
        (folder / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
        print(f"{folder.name}: special {header.special} stop {header.stop} prefix {header.prefix}")


_CLASSES = [None, "LlamaTokenizerFast", "LlamaTokenizer", "CodeLlamaTokenizer", "GemmaTokenizer", "GPT2Tokenizer",
            "Qwen2Tokenizer", "T5Tokenizer", "PreTrainedTokenizerFast", "GPTNeoXTokenizer"]
_TOKENS = ["<s>", "</s>", "<unk>", "<pad>", "<mask>", "A", "\u2581A", "B", "<image>", "<|eot_id|>", "<turn|>", None]


def random_folder(rng) -> dict[str, dict]:
    """A folder drawn from the fixtures' documents with a random config: class, flags, special
    tokens (present in the vocabulary, added, or neither), templates, a special_tokens_map."""
    tj = copy.deepcopy(rng.choice([_sp(), _sp(post_processor=_BOS_TEMPLATE), _byte_fallback_doc(),
                                   _byte_level_doc(), _gemma_doc(), _gemma_turn_doc(), _llama_over_byte_level_doc()]))
    if rng.random() < 0.3:
        # the next id, as files written by tokenizers have (it renumbers other ids on loading)
        ids = [*tj["model"]["vocab"].values(), *(a["id"] for a in tj["added_tokens"])]
        content = rng.choice(_TOKENS[:-1])
        if all(a["content"] != content for a in tj["added_tokens"]):
            tj["added_tokens"].append(_added(tj["model"]["vocab"].get(content, max(ids) + 1), content))
    cfg: dict = {}
    if (cls := rng.choice(_CLASSES)) is not None:
        cfg["tokenizer_class"] = cls
    for key in ("add_bos_token", "add_eos_token"):
        if rng.random() < 0.4:
            cfg[key] = rng.random() < 0.5
    for key in ("bos_token", "eos_token", "unk_token", "pad_token", "mask_token", "image_token"):
        if rng.random() < 0.5:
            cfg[key] = rng.choice(_TOKENS)
    if rng.random() < 0.3:
        cfg["additional_special_tokens"] = rng.sample(_TOKENS[:-1], 2)
    if rng.random() < 0.2:  # as saved by transformers: the file's added tokens
        cfg["added_tokens_decoder"] = {str(a["id"]): {k: v for k, v in a.items() if k != "id"}
                                       for a in tj["added_tokens"]}
    files = {"tokenizer.json": tj, "tokenizer_config.json": cfg}
    if rng.random() < 0.3:
        files["special_tokens_map.json"] = {"eos_token": rng.choice(_TOKENS[:-1])}
    if rng.random() < 0.3:
        files["generation_config.json"] = {"eos_token_id": [rng.randrange(10)]}
    return files


def differential(n: int, mnn_git: Path, seed: int = 0) -> int:
    """``n`` random folders through MNN's exporter and through mtokspec: the number of folders whose
    bytes differ (each printed), among those the exporter accepts."""
    import random

    import mtokspec
    from mtokspec.convert import from_hf
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    llm_tokenizer, _ = load_exporter(mnn_git)
    rng = random.Random(seed)
    differ = exported = 0
    for i in range(n):
        files = random_folder(rng)
        with tempfile.TemporaryDirectory() as tmp:
            for file_name, doc in files.items():
                Path(tmp, file_name).write_text(json.dumps(doc), encoding="utf-8")
            try:
                ref = exporter_bytes(llm_tokenizer, Path(tmp))
            except Exception:  # transformers refuses the folder: nothing to compare
                continue
            exported += 1
            try:
                ours = mtokspec.build(from_hf(tmp).tree)
            except mtokspec.Error as e:
                ours = f"refused: {e}".encode()
            if ours != ref:
                differ += 1
                theirs = mtokspec.parse(ref).header
                mine = mtokspec.parse(ours).header if not ours.startswith(b"refused") else ours
                print(f"#{i} differs: {json.dumps(files.get('tokenizer_config.json'))}\n  exporter {theirs}\n  mtokspec {mine}")
    print(f"{exported} of {n} folders exported; {differ} differ")
    return differ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.hf5_fixtures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true", help="run MNN's exporter and write expected.json")
    parser.add_argument("--mnn-git", type=Path, default=MNN_GIT, help="a git mirror of alibaba/MNN")
    parser.add_argument("--differential", type=int, metavar="N",
                        help="instead: N random folders through the exporter and mtokspec; exit 1 if any differ")
    parser.add_argument("--seed", type=int, default=0, help="of the random folders (default 0)")
    args = parser.parse_args(argv)
    if args.differential:
        return 1 if differential(args.differential, args.mnn_git, args.seed) else 0
    folders = write_folders()
    if args.record:
        record(folders, args.mnn_git)
    return 0


if __name__ == "__main__":
    sys.exit(main())
