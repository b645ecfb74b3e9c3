"""Hugging Face model folders whose pipelines were written by code mtokspec did not write.

    python -m tools.public_pipelines OUT_DIR [--only NAME ...] [--list]

Two kinds of folder, each ``tokenizer.json`` + ``tokenizer_config.json`` + ``special_tokens_map.json``:

* ``converter``: transformers' own slow->fast converters (``transformers.convert_slow_tokenizer``)
  applied to small models trained here: SentencePiece models (``sentencepiece``, unigram and bpe,
  byte fallback for the Llama/Gemma kind) and BPE / WordPiece vocabularies (HF ``tokenizers``).
  A converter takes a slow tokenizer; transformers 5 has none, so a ``Slow`` stand-in carries exactly
  the attributes the converter reads.  The Llama kind's BOS template is written by transformers'
  ``TokenizersBackend.update_post_processor``, as the fast class does on load.
* ``tokenizers-api``: pipeline variants public models use that no converter produces, assembled with
  the ``tokenizers`` API on the same trained vocabularies.

Deterministic: fixed training text (the corpus's bench_*.txt prefixes), ``num_threads=1``; a build
twice gives the same bytes.  A folder its converter cannot build is reported (``SKIP``) and not
written.  Needs ``sentencepiece``, ``protobuf``, ``tokenizers`` and ``transformers``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .training import CORPUS, BuildError, Models, training_lines
from .converters import Spec, converter_specs
from .variants import variant_specs


def all_specs() -> list[Spec]:
    """Every folder, converters first."""
    return converter_specs() + variant_specs()


# ----------------------------------------------------------------------------------- writing

def _kind(obj: Any) -> str:
    if obj is None:
        return "-"
    if obj.get("type") == "Sequence":
        inner = obj.get("normalizers") or obj.get("pretokenizers") or obj.get("decoders") or obj.get("processors") or []
        return "Seq[" + ",".join(_kind(x) for x in inner) + "]"
    return str(obj.get("type"))


def summary(tokenizer_json: dict[str, Any]) -> str:
    """``normalizer / pre_tokenizer / model / decoder / post_processor`` types of a tokenizer.json."""
    j = tokenizer_json
    return " / ".join([_kind(j.get("normalizer")), _kind(j.get("pre_tokenizer")), str(j["model"]["type"]),
                       _kind(j.get("decoder")), _kind(j.get("post_processor"))])


SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def write_folder(out: Path, spec: Spec, tok: Any, corpus: Path = CORPUS) -> dict[str, Any]:
    """Write ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json``; the parsed tokenizer.json."""
    out.mkdir(parents=True, exist_ok=True)
    text = tok.to_str(pretty=True)
    (out / "tokenizer.json").write_text(text + "\n", encoding="utf-8")
    tj = json.loads(text)
    config: dict[str, Any] = {"added_tokens_decoder": {
        str(a["id"]): {k: a[k] for k in ("content", "lstrip", "normalized", "rstrip", "single_word", "special")}
        for a in tj["added_tokens"]}}
    config.update(spec.config)
    config.setdefault("clean_up_tokenization_spaces", False)
    config.setdefault("model_max_length", 512)
    if spec.chat:
        config["chat_template"] = json.loads((corpus / "chat" / spec.chat).read_text(encoding="utf-8"))["template"]
    smap = {k: config[k] for k in SPECIAL_KEYS if config.get(k) is not None}
    extra = [a["content"] for a in tj["added_tokens"] if a["special"] and a["content"] not in smap.values()]
    if extra:
        smap["additional_special_tokens"] = extra
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n",
                                               encoding="utf-8")
    (out / "special_tokens_map.json").write_text(json.dumps(smap, indent=2, ensure_ascii=False) + "\n",
                                                 encoding="utf-8")
    return tj


def _add_config_specials(tok: Any, config: dict[str, Any]) -> None:
    """The config's special tokens as added special tokens, as transformers' fast class does on load."""
    from tokenizers import AddedToken

    have = {a.content for a in tok.get_added_tokens_decoder().values()}
    new = [config[k] for k in SPECIAL_KEYS if config.get(k) is not None and config[k] not in have]
    if new:
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in dict.fromkeys(new)])


def build(out_dir: Path, only: list[str] | None = None, corpus: Path = CORPUS,
          log: Callable[[str], None] = print) -> dict[str, str]:
    """Build the folders into ``out_dir``; returns name -> summary, or ``"SKIP: reason"``."""
    import tempfile

    specs = all_specs()
    names = {s.name for s in specs}
    unknown = [x for x in only or [] if x not in names]
    if unknown:
        raise BuildError(f"unknown folder name(s): {', '.join(unknown)}")
    chosen = [s for s in specs if not only or s.name in only]
    logging.getLogger("transformers").setLevel(logging.ERROR)
    results: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as work:
        models = Models(training_lines(corpus), Path(work))
        for spec in chosen:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tok = spec.build(models)
                    _add_config_specials(tok, spec.config)
                tj = write_folder(out_dir / spec.name, spec, tok, corpus)
                results[spec.name] = summary(tj)
            except Exception as e:  # noqa: BLE001 - a converter's own failure is the finding, reported
                results[spec.name] = f"SKIP: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
            log(f"{spec.name:30s} {spec.source:22s} {results[spec.name]}")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the folders are written under this directory")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="build only these folders")
    ap.add_argument("--list", action="store_true", help="print the folder names and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in all_specs():
            print(f"{s.name:30s} {s.source}")
        return 0
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        build(args.out, args.only)
    except (BuildError, ImportError) as e:
        print(f"public_pipelines: {e}", file=sys.stderr)
        return 2
    return 0
