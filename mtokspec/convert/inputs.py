"""The parsed Hugging Face folder both targets of ``convert`` read (:mod:`.hf`, the exporter's
bytes; :mod:`.mnn_target`, the bytes MNN runs as HF): its files (:class:`HFInputs`,
:func:`load_hf`), the checked reads of their JSON fields, and what both make of its components
(:func:`post_processor_template`, :data:`WHITESPACE_SPLIT`).

Every field helper refuses a malformed value with a :class:`~mtokspec.convert.loss.ConversionError`
naming the field's path in ``tokenizer.json``."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtokspec.args import path as path_arg
from mtokspec.convert.loss import ConversionError
from mtokspec.format import tree as t

SEQ_A = "A"  # marker for "sequence A" inside a template list


@dataclass
class HFInputs:
    """The files a conversion reads (parsed JSON; None when absent)."""

    tokenizer_json: dict
    tokenizer_config: dict | None = None
    special_tokens_map: dict | None = None
    generation_config: dict | None = None
    folder: Path | None = None
    extra_files: list[str] = field(default_factory=list)

    def template(self) -> list | None:
        """HF's single-sequence template of the folder (:func:`post_processor_template` of the
        ``tokenizer.json`` post-processor)."""
        return post_processor_template(self.tokenizer_json.get("post_processor"))


#: the files of a model folder the converter reads (tokenizer.json may also be given by its own path)
HF_INPUT_NAMES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json",
                  "chat_template.jinja", "chat_template.json")


def read_json(path: Path) -> Any:
    from mtokspec.reading import read_file

    return json.loads(read_file(path).decode("utf-8"))


def load_hf(path: str | os.PathLike) -> HFInputs:
    """Read a model folder (or a ``tokenizer.json`` file and its siblings); a path that does not
    exist is ``FileNotFoundError``, as ``open`` raises it."""
    p = Path(path_arg("path", path))
    try:
        os.stat(p)
    except FileNotFoundError:
        raise
    except (OSError, ValueError):  # a NUL, a lone surrogate, a name too long ...: the checks below refuse it
        pass
    if p.is_dir():
        folder, tj_path = p, p / "tokenizer.json"
    else:
        folder, tj_path = p.parent, p
    if not tj_path.is_file():
        raise ConversionError(f"{tj_path}: no tokenizer.json (the .mtok converter needs it)")
    try:
        tj = read_json(tj_path)
    except (OSError, ValueError, RecursionError) as e:
        raise ConversionError(f"{tj_path}: cannot read: {e}") from e
    if not isinstance(tj, dict):
        raise ConversionError(f"{tj_path}: not a tokenizer.json: {json_kind(tj)}, not an object")
    if not isinstance(tj.get("model"), dict):
        keys = ", ".join(list(map(repr, tj))[:6]) + (", ..." if len(tj) > 6 else "")
        got = "an empty object" if not tj else f"an object with {keys}"
        hint = " (a tokenizer_config.json?)" if "tokenizer_class" in tj or "chat_template" in tj else ""
        raise ConversionError(f"{tj_path}: not a tokenizer.json: no 'model' object; got {got}{hint}")

    def opt(name: str) -> Any:
        f = folder / name
        if not f.is_file():
            return None
        try:
            return read_json(f)
        except (OSError, ValueError, RecursionError) as e:
            raise ConversionError(f"{f}: cannot read: {e}") from e

    tc = opt("tokenizer_config.json")
    stm = opt("special_tokens_map.json")
    # The exporter swallows every error while reading generation_config.json.
    try:
        gc = opt("generation_config.json")
    except ConversionError:
        gc = None
    extra = [n for n in ("chat_template.jinja", "chat_template.json") if (folder / n).is_file()]
    return HFInputs(tj, tc if isinstance(tc, dict) else None, stm if isinstance(stm, dict) else None,
                    gc if isinstance(gc, dict) else None, folder, extra)


def post_processor_template(pp: Any) -> list | None:
    """Rule S5's reading of a ``tokenizer.json`` post-processor: what HF puts around a single
    sequence, as a list of ids and :data:`SEQ_A`; None when it is not modelled."""
    if pp is None:
        return [SEQ_A]
    if not isinstance(pp, dict):
        return [SEQ_A]
    ptype = pp.get("type")
    if ptype == "TemplateProcessing":
        out: list = []
        st = as_object(pp.get("special_tokens"), "post_processor.special_tokens")
        for item in as_list(pp.get("single"), "post_processor.single"):
            if not isinstance(item, dict) or len(item) != 1:
                return None
            key, value = next(iter(item.items()))
            if key == "Sequence":
                out.append(SEQ_A)
            elif key == "SpecialToken" and isinstance(value, dict) and isinstance(value.get("id"), str):
                entry = as_object(st.get(value["id"]), f"post_processor.special_tokens[{value['id']!r}]")
                ids = as_list(entry.get("ids"), f"post_processor.special_tokens[{value['id']!r}].ids")
                out.extend(id_field(i, "post_processor.special_tokens[].ids[]") for i in ids)
            else:
                return None
        return out
    if ptype in ("RobertaProcessing", "BertProcessing"):
        cls: Any = pp.get("cls")  # malformed values raise below and are caught
        sep: Any = pp.get("sep")
        try:
            return [int(cls[1]), SEQ_A, int(sep[1])]
        except (TypeError, IndexError, KeyError, ValueError, OverflowError):  # a dict, a short list, inf ...
            return None
    if ptype == "ByteLevel":
        return [SEQ_A]
    if ptype == "Sequence":
        cur: list = [SEQ_A]
        for child in as_list(pp.get("processors"), "post_processor.processors"):
            tpl = post_processor_template(child)
            if tpl is None:
                return None
            new: list = []
            for x in tpl:
                new.extend(cur if x == SEQ_A else [x])
            cur = new
        return cur
    return None


WHITESPACE_SPLIT = t.SplitPreTokenizer(
    pattern=(r"[\p{L}\p{Alphabetic}\p{M}\d\p{Connector_Punctuation}_\p{Join_Control}]+"
             r"|[^\p{L}\p{Alphabetic}\p{M}\d\p{Connector_Punctuation}_\p{Join_Control}\s\p{White_Space}]+"),
    invert=True, behavior=1)
"""HF ``Whitespace`` as a Split: the pieces are runs of word characters (Rust regex ``\\w`` =
Alphabetic, Mark, Nd, Pc, Join_Control) or runs of other non-space characters (``\\s`` = White_Space);
the white space between them is removed.  HF's ``Split`` runs Oniguruma, whose ``\\w`` differs from
the Rust ``\\w`` of ``Whitespace`` (e.g. U+00B2, U+200D), hence the spelled-out classes; with HF
``tokenizers`` this Split gives the same ``pre_tokenize_str`` as ``Whitespace`` on every code point.
The redundant ``\\p{L}``, ``\\d``, ``_`` and ``\\s`` are for MNN's C++ runtime, whose regex engine folds
each non-ASCII character to its general category and reads only the first letter of a property
name (``\\p{Alphabetic}``, ``\\p{Join_Control}``, ``\\p{Connector_Punctuation}``, ``\\p{White_Space}``
become empty classes there).  It then splits ASCII text exactly like HF but differs on non-ASCII
characters whose class it cannot see: No (e.g. U+00B2: MNN word, HF not), So with Other_Alphabetic
(circled letters), non-ASCII Pc (U+203F), ZWNJ/ZWJ, and U+0085/U+2028/U+2029 (HF space, MNN not)."""


def json_kind(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def as_object(value: Any, path: str) -> dict:
    """``value`` as an object (``null`` counts as empty); anything else is refused."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConversionError(f"{path}: expected an object, got {json_kind(value)}")
    return value


def as_list(value: Any, path: str) -> list:
    """``value`` as a list (``null`` counts as empty); anything else is refused."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConversionError(f"{path}: expected a list, got {json_kind(value)}")
    return value


def flag_field(d: dict, key: str, default: bool, path: str) -> bool:
    """A boolean field; the exporter writes ``int(value)``, so 0 and 1 count as false and true."""
    v = d.get(key, default)
    if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
        return bool(v)
    raise ConversionError(f"{path}.{key}: expected true or false, got {v!r:.40}")


def int_field(d: dict, key: str, default: int, path: str, lo: int = 0, hi: int = 2**32 - 1) -> int:
    """An integer field in ``lo..hi`` (the range the .mtok field holds)."""
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ConversionError(f"{path}.{key}: expected an integer in {lo}..{hi}, got {v!r:.40}")
    return v


def id_field(value: Any, path: str) -> int:
    """A token id: an integer the .mtok's u32 fields hold."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise ConversionError(f"{path}: a token id must be an integer in 0..2^32-1, got {value!r:.40}")
    return value


def utf8_field(text: Any, path: str) -> bytes:
    """The UTF-8 bytes of a token; JSON escapes can spell a lone surrogate, which has none."""
    if not isinstance(text, str):
        raise ConversionError(f"{path}: expected a string, got {json_kind(text)}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ConversionError(f"{path}: {text!r:.40} is not Unicode text (a lone surrogate)") from e


def token_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):
        c = value.get("content")
        return c if isinstance(c, str) else None
    return value if isinstance(value, str) else str(value)


def pattern_kind(pattern: Any) -> tuple[str, str | None]:
    """(text, 'Regex'|'String'|None) of a HF pattern field."""
    if isinstance(pattern, dict):
        if "Regex" in pattern:
            return str(pattern["Regex"]), "Regex"
        if "String" in pattern:
            return str(pattern["String"]), "String"
        return "", None
    if isinstance(pattern, str):
        return pattern, None
    return "", None


def metaspace_prepends_as_stored(pt: Any) -> bool:
    """Whether every Metaspace in ``pt`` prepends to one word exactly when its stored
    ``add_prefix_space`` says so (``prepend_scheme`` "first" acts as "always" there)."""
    if not isinstance(pt, dict):
        return True
    if pt.get("type") == "Sequence":
        children = pt.get("pretokenizers")
        return all(map(metaspace_prepends_as_stored, children)) if isinstance(children, list) else False
    if pt.get("type") != "Metaspace":
        return True
    scheme, aps = pt.get("prepend_scheme"), pt.get("add_prefix_space", True)
    return scheme is None or (scheme in ("always", "first")) == bool(aps)
