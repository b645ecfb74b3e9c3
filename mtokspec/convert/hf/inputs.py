"""The files a conversion reads, and the checked reads of their JSON fields.

Every field helper refuses a malformed value with a :class:`~mtokspec.convert.loss.ConversionError`
naming the field's path in ``tokenizer.json``."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtokspec.convert.loss import ConversionError

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


#: the files of a model folder the converter reads (tokenizer.json may also be given by its own path)
HF_INPUT_NAMES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json",
                  "chat_template.jinja", "chat_template.json")


def read_json(path: Path) -> Any:
    from mtokspec.reading import read_file

    return json.loads(read_file(path).decode("utf-8"))


def load_hf(path: str | os.PathLike) -> HFInputs:
    """Read a model folder (or a ``tokenizer.json`` file and its siblings); a path that does not
    exist is ``FileNotFoundError``, as ``open`` raises it."""
    from mtokspec.args import path as path_arg

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
