"""The fuzzer's inputs: files with byte edits, documents with structural edits (:func:`mutated`),
texts and ids of any kind, and ``tokenizer.json`` folders."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import strategies as st

import mtokspec
from mtokspec.testing import strategies as ms

from tools.fuzz.calls import CORPUS, ROOT

# ---------------------------------------------------------------------------------------------
# inputs

ANY_TEXT = st.text(st.characters(codec=None), max_size=40)  # lone surrogates included
ANY_ID = st.one_of(st.integers(-3, 40), st.integers(-2**70, 2**70), st.sampled_from([2**32, 2**32 - 1, 2**63, -2**31]))
IDS = st.lists(ANY_ID, max_size=12)


@st.composite
def byte_edits(draw, data: bytes) -> bytes:
    """``data`` with 0-4 random byte edits: a byte changed, bytes inserted or deleted, cut short."""
    b = bytearray(data)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(b)))
        if kind == 0 and at < len(b):
            b[at] = draw(st.integers(0, 255))
        elif kind == 1:
            b[at:at] = draw(st.binary(min_size=1, max_size=4))
        elif kind == 2:
            del b[at:at + draw(st.integers(1, 4))]
        else:
            del b[at:]
    return bytes(b)


def tokenizer_file_bytes() -> st.SearchStrategy[bytes]:
    """``.mtok`` (valid or not, as the strategies make them) and legacy files, then byte edits."""
    files = st.one_of(ms.mtok_bytes(valid=False), ms.mtok_bytes(valid=True), ms.txt_bytes())
    return files.flatmap(lambda d: st.one_of(st.just(d), byte_edits(d)))


def parsed_files() -> st.SearchStrategy:
    """Trees of files that parse (the runtime and the converters start from one)."""
    return tokenizer_file_bytes().map(_parse_or_none).filter(lambda tree: tree is not None)


def _parse_or_none(data: bytes):
    try:
        return mtokspec.parse(data)
    except mtokspec.MtokFormatError:
        return None


def legacy_files() -> st.SearchStrategy:
    """Legacy tokenizer.txt trees that parse (valid ones and edited bytes)."""
    files = st.one_of(ms.txt_bytes(), ms.txt_bytes().flatmap(byte_edits))
    return files.map(_parse_or_none).filter(lambda tree: tree is not None)


_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40),
                          st.sampled_from([-1, 0, 1, 2**32, 2**63, 1e308, -0.5]), st.floats(allow_nan=False),
                          st.text(max_size=6))
_JSON_VALUES = st.one_of(_JSON_SCALARS, st.lists(_JSON_SCALARS, max_size=3),
                         st.dictionaries(st.text(max_size=6), _JSON_SCALARS, max_size=3))


def _paths(doc, limit: int = 4000) -> list[tuple]:
    """Paths to the values of a JSON document, shallow ones first; long lists contribute their
    first, second and last elements only, so a vocabulary does not crowd out the structure."""
    out: list[tuple] = []
    todo = [((), doc)]
    while todo and len(out) < limit:
        nxt = []
        for path, v in todo:
            if isinstance(v, dict):
                items = list(v.items())
                if len(items) > 24:
                    items = items[:2] + items[-1:]
                kids = [(path + (k,), x) for k, x in items]
            elif isinstance(v, list):
                idx = range(len(v)) if len(v) <= 24 else (0, 1, len(v) - 1)
                kids = [(path + (i,), v[i]) for i in idx]
            else:
                continue
            out.extend(p for p, _ in kids)
            nxt.extend(kids)
        todo = nxt
    return out[:limit]


def _edit(doc, path: tuple, value, delete: bool):
    """A copy of ``doc`` with the value at ``path`` replaced or deleted; only the containers on the
    path are copied (documents share the rest, so a big vocabulary costs nothing)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    new = dict(doc) if isinstance(doc, dict) else list(doc)
    if rest:
        new[head] = _edit(doc[head], rest, value, delete)
    elif delete:
        del new[head]
    else:
        new[head] = value
    return new


@st.composite
def mutated(draw, doc, max_edits: int = 4):
    """``doc`` (a JSON document) with 1-``max_edits`` random edits: a key or element deleted, or a
    value replaced by null, a bool, a number, a string, a list or a dict."""
    for _ in range(draw(st.integers(1, max_edits))):
        paths = _paths(doc)
        if not paths:
            return draw(_JSON_VALUES)
        path = paths[draw(st.integers(0, len(paths) - 1))]
        delete = draw(st.booleans())
        doc = _edit(doc, path, None if delete else draw(_JSON_VALUES), delete)
    return doc


# ---------------------------------------------------------------------------------------------
# tokenizer.json folders

def _small_corpus_docs() -> list[tuple[dict, dict | None]]:
    """The corpus tokenizer.json documents cut to a small vocabulary (the first merges and the
    tokens they name, added tokens, special tokens), with their tokenizer_config.json."""
    out = []
    for folder in sorted(CORPUS.glob("tok/*")) if CORPUS.is_dir() else []:
        tj_path = folder / "tokenizer.json"
        if not tj_path.is_file():
            continue
        tj = json.loads(tj_path.read_text(encoding="utf-8"))
        model = dict(tj["model"])
        vocab = model.get("vocab")
        if isinstance(vocab, dict):
            merges = model.get("merges") or []
            keep = merges[:40]
            names = set(list(vocab)[:60])
            for m in keep:
                names.update(m.split(" ", 1) if isinstance(m, str) else m)
            model["vocab"] = {k: v for k, v in vocab.items() if k in names}
            if "merges" in model:
                model["merges"] = keep
        elif isinstance(vocab, list):
            model["vocab"] = vocab[:80]
        tj = {**tj, "model": model}
        cfg_path = folder / "tokenizer_config.json"
        cfg = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.is_file() else None
        out.append((tj, cfg))
    return out


_SEEDS: list | None = None


def hf_seed_docs() -> list[tuple[dict, dict | None]]:
    """(tokenizer.json, tokenizer_config.json) pairs to mutate: the corpus ones, cut small, and the
    ``to_hf`` documents of two example files (so the fuzzer has seeds without the corpus)."""
    global _SEEDS
    if _SEEDS is None:
        from mtokspec.convert import to_hf
        seeds = _small_corpus_docs()
        example = mtokspec.parse((ROOT / "examples" / "tiny.mtok").read_bytes())
        seeds.append((to_hf(example), {"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": True,
                                       "bos_token": "<s>", "eos_token": "</s>", "chat_template": "{{ messages }}"}))
        _SEEDS = seeds
    return _SEEDS


@st.composite
def hf_folders(draw) -> dict[str, object]:
    """A model folder as ``{file name: content}``: a JSON document (mutated), raw bytes (malformed
    JSON), or the marker ``DIRECTORY`` (a folder where the file should be); a file may be absent."""
    tj, cfg = draw(st.sampled_from(hf_seed_docs()))
    files: dict[str, object] = {}
    for name, doc in (("tokenizer.json", tj), ("tokenizer_config.json", cfg),
                      ("special_tokens_map.json", {"bos_token": "<s>", "additional_special_tokens": ["<x>"]}),
                      ("generation_config.json", {"eos_token_id": [2, 7]})):
        if doc is None:
            continue
        # tokenizer.json mostly mutated (without it the converter stops at once)
        kind = draw(st.sampled_from(["as is"] + ["mutated"] * (8 if name == "tokenizer.json" else 3)
                                    + ["absent", "bytes", "directory"]))
        if kind == "as is":
            files[name] = doc
        elif kind == "mutated":
            files[name] = draw(mutated(doc))
        elif kind == "bytes":
            files[name] = byte_edit_json(draw, doc)
        elif kind == "directory":
            files[name] = DIRECTORY
    return files


DIRECTORY = object()


def byte_edit_json(draw, doc) -> bytes:
    text = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    return draw(st.one_of(byte_edits(text[:2000]), st.binary(max_size=20)))


def write_folder(root: Path, files: dict[str, object]) -> None:
    for name, content in files.items():
        p = root / name
        if content is DIRECTORY:
            p.mkdir()
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8", errors="surrogatepass")
