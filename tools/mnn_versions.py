"""Does ``semantics="mnn@VERSION"`` give what MNN VERSION's own code gives?

    python -m tools.mnn_versions VERSION=BIN [VERSION=BIN ...] [--record] [--folders DIR]

``BIN`` is an ``mnn_tok`` built from that release's tag (``docs/design/mnn-versions.md`` says how).
Each version's binary and its semantics run the same cases:

- ``corpus``: every corpus ``mnn.mtok`` / ``mnn.txt`` on every text set: ``encode``, ``encode_raw``,
  ``decode_stream`` and ``decode_seq`` of HF's ids (as ``ref_mnn.json`` records them for HEAD);
- ``probes``: files built here from a corpus file with what the versions read otherwise (a Strip
  normalizer, null sequence children, post-processor programs), on a few texts;
- ``chat``: every corpus chat template's cases, and templates that use ``|join``.

``--record`` writes the binaries' answers to ``tests/fixtures/mnn_versions.json`` (the corpus and
chat answers as digests, the probes in full), which ``tests/runtime/mnn/test_mnn_versions.py``
checks the semantics against without a binary.  ``--folders DIR`` (``tools.public_pipelines``'s
folders) also runs the ``--target mnn@VERSION`` and ``--target mnn`` files of each folder on its
probe texts, binary against semantics, counts the probes where the version differs from HF on each
(per output), and writes the counts to ``benchmarks/records/mnn_versions.json``.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
FIXTURE = ROOT / "tests" / "fixtures" / "mnn_versions.json"
RECORD = ROOT / "benchmarks" / "records" / "mnn_versions.json"
TEXT_SETS = ("en", "zh", "code", "edge", "mixed")
MODES = ("encode", "encode_raw", "decode_stream", "decode_seq")
REFUSED = "refused"  # MNN's error or crash; the semantics' refusal (an mtokspec.Error)
PROBE_TEXTS = ["  Hello world  ", "", "a", "Hi\tthere\n", " ", "中文 text", "<s>x</s>"]
JOIN_TEMPLATES = {
    "join-contents": "{{ messages|map(attribute='content')|join(', ') }}",
    "join-literal": "{{ ['a', 'b', 3]|join('-') }}|{{ ['x']|join }}",
    "join-set": "{% set x = messages|map(attribute='role')|join('/') %}{{ x }}:{{ x|length }}",
    "join-string": "{{ 'abc'|join('+') }}{% if add_generation_prompt %}<gen>{% endif %}",
}
CHAT_MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"},
                 {"role": "assistant", "content": "Hi!"}]


def digest(rows: list) -> str:
    """A short digest of a list of answers (as :func:`answer` gives them)."""
    return hashlib.sha256(json.dumps(rows, ensure_ascii=True).encode("ascii")).hexdigest()[:32]


# --- the binary ------------------------------------------------------------------------------------

def _binary_answer(mode: str, r: dict | None) -> Any:
    """One ``mnn_tok`` answer as a plain value: ids, bytes as hex, or :data:`REFUSED`."""
    if r is None or "error" in r:
        return REFUSED
    if mode.startswith("encode"):
        return r["ids"]
    return r["hex"] if r.get("invalid_utf8") else r["text"].encode("utf-8").hex()


def run_binary(binary: str, mode: str, path: Path, payloads: list[dict]) -> list[dict | None]:
    """``mnn_tok MODE FILE`` on each payload; where it crashes, the rest is run line by line (a
    line that crashes alone answers None)."""
    def once(batch: list[dict]) -> list[dict]:
        stdin = "".join(json.dumps(p, ensure_ascii=True) + "\n" for p in batch).encode("ascii")
        proc = subprocess.run([binary, mode, str(path)], input=stdin, capture_output=True, timeout=600)
        return [json.loads(line) for line in proc.stdout.decode("utf-8", "surrogateescape").split("\n") if line]

    rows: list[dict | None] = list(once(payloads))
    while len(rows) < len(payloads):
        last = rows[-1] if rows else None
        if last is not None and "load failed" in str(last.get("error", "")):
            rows += [rows[-1]] * (len(payloads) - len(rows))
            break
        alone = once([payloads[len(rows)]])
        rows.append(alone[0] if alone else None)
    return rows


_DRIVER_MODE = {"encode": "encode", "encode_raw": "encode-raw", "decode_stream": "decode", "decode_seq": "decode-seq"}


def binary_outputs(binary: str, path: Path, texts: list[str], ids: list[list[int]]) -> dict[str, list]:
    """The four outputs of ``mnn_tok`` for ``texts`` (encodes) and ``ids`` (decodes)."""
    out = {}
    for mode in MODES:
        payloads = [{"text": x} for x in texts] if mode.startswith("encode") else [{"ids": i} for i in ids]
        out[mode] = [_binary_answer(mode, r) for r in run_binary(binary, _DRIVER_MODE[mode], path, payloads)]
    return out


def binary_chat(binary: str, path: Path, cases: list[dict]) -> list:
    """``mnn_tok chat`` of each case (``{"messages", "add_generation_prompt"}``): text or REFUSED."""
    rows = run_binary(binary, "chat", path, [{"messages": c["messages"], "add_generation_prompt":
                                             c["add_generation_prompt"]} for c in cases])
    return [REFUSED if r is None or "error" in r else r["text"] for r in rows]


# --- the semantics ---------------------------------------------------------------------------------

def _refusing(f: Callable[[], Any]) -> Any:
    import mtokspec

    try:
        return f()
    except mtokspec.Error:
        return REFUSED


def semantics_outputs(semantics: str, data: bytes, texts: list[str], ids: list[list[int]]) -> dict[str, list]:
    """The four outputs of the semantics for a file's bytes (all REFUSED when it refuses the file)."""
    import mtokspec

    try:
        tok = mtokspec.Tokenizer.from_bytes(data, semantics=semantics)
    except mtokspec.Error:
        return {m: [REFUSED] * len(texts if m.startswith("encode") else ids) for m in MODES}
    return {"encode": [_refusing(lambda: tok.encode(x)) for x in texts],
            "encode_raw": [_refusing(lambda: tok.encode(x, add_special_tokens=False)) for x in texts],
            "decode_stream": [_refusing(lambda: tok.decode_bytes(i, stream=True).hex()) for i in ids],
            "decode_seq": [_refusing(lambda: tok.decode_bytes(i).hex()) for i in ids]}


def semantics_chat(semantics: str, data: bytes, cases: list[dict], day: str) -> list:
    """The semantics' chat renderings (the clock frozen at ``day``, when the binary rendered)."""
    import mtokspec

    tok = mtokspec.Tokenizer.from_bytes(data, semantics=semantics)
    return [_refusing(lambda: tok.apply_chat_template(c["messages"], add_generation_prompt=c["add_generation_prompt"],
                                                      strftime_now=day)) for c in cases]


# --- the cases -------------------------------------------------------------------------------------

def corpus_files(corpus: Path = CORPUS) -> list[tuple[str, Path]]:
    """``("name/file", path)`` of every corpus ``mnn.mtok`` and ``mnn.txt``."""
    return [(f"{d.name}/{f}", d / f) for d in sorted((corpus / "tok").iterdir()) for f in ("mnn.mtok", "mnn.txt")
            if (d / f).exists()]


def corpus_texts(corpus: Path, name: str, ts: str) -> tuple[list[str], list[list[int]]]:
    """A text set and HF's ``no_special`` ids of it for one corpus folder."""
    texts = json.loads((corpus / "text" / f"{ts}.json").read_text(encoding="utf-8"))
    ids = json.loads((corpus / "tok" / name / f"ref_{ts}.json").read_text(encoding="utf-8"))["no_special"]
    return texts, ids


def probe_files(corpus: Path = CORPUS) -> dict[str, bytes]:
    """Files that the versions read or run otherwise than HEAD, from corpus files."""
    import mtokspec
    from mtokspec.format import tree as t

    roberta = mtokspec.parse((corpus / "tok" / "roberta-base" / "mnn.mtok").read_bytes())
    bert = mtokspec.parse((corpus / "tok" / "bert-base-cased-derived" / "mnn.mtok").read_bytes())

    def with_(base: Any, **fields: Any) -> bytes:
        tree = copy.deepcopy(base)
        for k, v in fields.items():
            setattr(tree, k, v)
        return mtokspec.build(tree)

    program = t.PostProcessorProgram([t.SpecialTokenOp(0), t.SequenceOp(), t.SpecialTokenOp(2)])
    return {
        "strip": with_(roberta, normalizer=t.StripNormalizer(True, True)),
        "strip-in-sequence": with_(roberta, normalizer=t.SequenceNormalizer([t.StripNormalizer(True, False),
                                                                              t.PrependNormalizer("x")])),
        "null-normalizer-child": with_(roberta, normalizer=t.SequenceNormalizer([t.PrependNormalizer("x"),
                                                                                  t.NoNormalizer()])),
        "null-pre-tokenizer-child": with_(roberta, pre_tokenizer=t.SequencePreTokenizer(
            [t.NoPreTokenizer(), roberta.pre_tokenizer])),
        "program-and-prefix": with_(roberta, post_processor=program,
                                    header=t.make_header(roberta.header.special, roberta.header.stop, [0])),
        "ids-only-program": with_(bert, post_processor=t.LegacyPostProcessor([102, 102])),
    }


def chat_cases(corpus: Path = CORPUS) -> dict[str, tuple[str, str, str, list[dict]]]:
    """``name -> (template, bos, eos, cases)``: the corpus chat templates and the ``|join`` ones."""
    out = {}
    for f in sorted((corpus / "chat").glob("*.json")):
        if f.name.startswith("_"):
            continue
        c = json.loads(f.read_text(encoding="utf-8"))
        out[f.name] = (c["template"], c.get("bos_token") or "", c.get("eos_token") or "",
                       [{"messages": k["messages"], "add_generation_prompt": k["add_generation_prompt"]}
                        for k in c["cases"]])
    for name, template in JOIN_TEMPLATES.items():
        out[name] = (template, "<s>", "</s>", [{"messages": CHAT_MESSAGES, "add_generation_prompt": agp}
                                               for agp in (True, False)])
    return out


def chat_file(corpus: Path, template: str, bos: str, eos: str) -> bytes:
    """phi-3-mini's ``.mtok`` carrying this template and BOS/EOS strings (as ``make_refs.py``)."""
    import mtokspec

    tree = mtokspec.parse((corpus / "tok" / "phi-3-mini" / "mnn.mtok").read_bytes())
    tree.chat_template, tree.bos_token, tree.eos_token = template, bos, eos
    return mtokspec.build(tree)


# --- recording and checking -------------------------------------------------------------------------

def _version(name: str) -> Any:
    """The :class:`~mtokspec.runtime.mnn.versions.MnnVersion` of a tag (or ``HEAD``)."""
    from mtokspec.runtime.mnn.versions import HEAD, VERSIONS

    return HEAD if name == HEAD.name else VERSIONS[name]


def record_version(version: str, binary: str, corpus: Path, work: Path) -> dict:
    """What the binary answers on every case (corpus and chat as digests, probes in full)."""
    day = dt.date.today().isoformat()
    rec: dict[str, Any] = {"commit": _version(version).commit, "recorded_on": day, "corpus": {}, "probes": {},
                           "chat": {}}
    for key, path in corpus_files(corpus):
        rec["corpus"][key] = {}
        for ts in TEXT_SETS:
            texts, ids = corpus_texts(corpus, key.split("/")[0], ts)
            rec["corpus"][key][ts] = {m: digest(v) for m, v in binary_outputs(binary, path, texts, ids).items()}
    for name, data in probe_files(corpus).items():
        path = work / f"{name}.mtok"
        path.write_bytes(data)
        ids = [[0, 31414, 232, 2], [50118, 1437], [2]]
        rec["probes"][name] = binary_outputs(binary, path, PROBE_TEXTS, ids)
    for name, (template, bos, eos, cases) in chat_cases(corpus).items():
        path = work / "chat.mtok"
        path.write_bytes(chat_file(corpus, template, bos, eos))
        rows = binary_chat(binary, path, cases)
        rec["chat"][name] = rows if name in JOIN_TEMPLATES else digest(rows)
    return rec


def check_version(version: str, rec: dict, corpus: Path) -> dict[str, tuple[int, int]]:
    """``{"corpus"|"probes"|"chat": (agreeing, cases)}`` of ``mnn@VERSION`` against a record, and
    the disagreements (``"differ"``: a list of names)."""
    semantics = _version(version).semantics
    counts = {"corpus": [0, 0], "probes": [0, 0], "chat": [0, 0]}
    differ: list[str] = []
    for key, path in corpus_files(corpus):
        data = path.read_bytes()
        for ts in TEXT_SETS:
            texts, ids = corpus_texts(corpus, key.split("/")[0], ts)
            ours = semantics_outputs(semantics, data, texts, ids)
            for m in MODES:
                counts["corpus"][1] += 1
                if digest(ours[m]) == rec["corpus"][key][ts][m]:
                    counts["corpus"][0] += 1
                else:
                    differ.append(f"corpus {key} {ts} {m}")
    ids = [[0, 31414, 232, 2], [50118, 1437], [2]]
    for name, data in probe_files(corpus).items():
        ours = semantics_outputs(semantics, data, PROBE_TEXTS, ids)
        for m in MODES:
            for k, (a, b) in enumerate(zip(ours[m], rec["probes"][name][m])):
                counts["probes"][1] += 1
                if a == b:
                    counts["probes"][0] += 1
                else:
                    differ.append(f"probe {name} {m} [{k}]: ours {a!r}, MNN {b!r}")
    for name, (template, bos, eos, cases) in chat_cases(corpus).items():
        rows = semantics_chat(semantics, chat_file(corpus, template, bos, eos), cases, rec["recorded_on"])
        counts["chat"][1] += 1
        want = rec["chat"][name]
        if (rows if name in JOIN_TEMPLATES else digest(rows)) == want:
            counts["chat"][0] += 1
        else:
            differ.append(f"chat {name}: ours {rows!r}"[:300] + (f", MNN {want!r}"[:300] if isinstance(want, list) else ""))
    return {**{k: (a, n) for k, (a, n) in counts.items()}, "differ": differ}  # type: ignore[dict-item]


def folder_agreement(version: str, binary: str, folders: Path, work: Path) -> dict:
    """Per ``--target``: how many probe answers of the folders' files the binary and the semantics
    share, and the folders where they do not all agree."""
    import tokenizers

    import mtokspec
    from mtokspec.convert import from_hf
    from mtokspec.convert.mnn_target.reference import probe_texts

    from mtokspec.convert.inputs import load_hf
    from mtokspec.convert.mnn_target.reference import HFReference
    from mtokspec.convert.mnn_target.report import mnn_report

    out = {}
    for target in dict.fromkeys((_version(version).semantics, "mnn")):
        agree = total = 0
        bad = []
        hf_differing = dict.fromkeys(("encode", "raw", "seq", "stream"), 0)
        for folder in sorted(p for p in folders.iterdir() if (p / "tokenizer.json").exists()):
            try:
                tree = from_hf(folder, target=target).tree
            except mtokspec.Error:  # a folder the format cannot hold (a WordLevel model)
                continue
            # the version on this file against HF, on the report's probes
            added = sorted(tree.added_tokens, key=lambda a: not a.special)
            report = mnn_report(tree, HFReference(load_hf(folder).tokenizer_json, tree, "hf"),
                                probe_texts([a.content for a in added]), semantics=_version(version).semantics)
            for o, (n, _) in report.agreement.items():
                hf_differing[o] += n
            data = mtokspec.build(tree)
            path = work / f"{folder.name}.mtok"
            path.write_bytes(data)
            hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
            texts = probe_texts([a.content for a in tree.added_tokens])
            ids = [hf.encode(x, add_special_tokens=False).ids for x in texts]
            theirs = binary_outputs(binary, path, texts, ids)
            ours = semantics_outputs(_version(version).semantics, data, texts, ids)
            n = sum(len(v) for v in ours.values())
            a = sum(x == y for m in MODES for x, y in zip(ours[m], theirs[m]))
            agree, total = agree + a, total + n
            if a != n:
                bad.append(folder.name)
        out[target] = {"agree": agree, "answers": total, "folders_not_all_agreeing": bad,
                       "probes_differing_from_hf": hf_differing}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bins", nargs="+", metavar="VERSION=BIN")
    ap.add_argument("--record", action="store_true", help=f"write {FIXTURE.relative_to(ROOT)}")
    ap.add_argument("--folders", type=Path, help="tools.public_pipelines's output folder")
    args = ap.parse_args(argv)
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}
    record = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}
    bad = False
    with tempfile.TemporaryDirectory() as tmp:
        for item in args.bins:
            version, _, binary = item.partition("=")
            rec = record_version(version, binary, CORPUS, Path(tmp))
            result = check_version(version, rec, CORPUS)
            summary = {k: v for k, v in result.items() if k != "differ"}
            print(f"{_version(version).semantics}: {summary}")
            for line in result["differ"][:20]:  # type: ignore[union-attr]
                print("  ", line)
            bad = bad or bool(result["differ"])
            fixture[version] = rec
            if args.folders:
                record[version] = folder_agreement(version, binary, args.folders, Path(tmp))
                print(f"  folders: {record[version]}")
    if args.record:
        FIXTURE.write_text(json.dumps(fixture, ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        if args.folders:
            RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
