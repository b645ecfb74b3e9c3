"""Loss records: what a conversion to ``.mtok`` cannot keep.

Every lossy (⚠) mapping of MNN's exporter that a conversion hits becomes one :class:`Loss`:
``path`` names the place in ``tokenizer.json`` (or the companion file), ``what`` says what was there,
``replacement`` what the ``.mtok`` holds instead, and ``may_change_tokenization`` whether encoding
text to ids can differ from Hugging Face because of it (False: only decoding, offsets or metadata).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from mtokspec.errors import Error
from mtokspec.args import items

__all__ = ["Loss", "ConversionError", "render_text", "render_json", "losses_to_plain", "UNCHECKED", "refusing"]


@dataclass(frozen=True, slots=True)
class Loss:
    """One lossy mapping hit by a conversion."""

    path: str
    what: str
    replacement: str
    may_change_tokenization: bool

    def __str__(self) -> str:
        mark = "changes ids" if self.may_change_tokenization else "no id change"
        return f"{self.path}: {self.what} -> {self.replacement} [{mark}]"


class ConversionError(Error, ValueError):
    """A conversion that cannot be done, or (``strict=True``) one that would lose information.

    ``losses`` holds the :class:`Loss` records (empty when the input itself is unusable).
    """

    def __init__(self, message: str, losses: list[Loss] | None = None):
        self.losses = list(losses or [])
        text = message
        if self.losses:
            text += "\n" + render_text(self.losses)
        super().__init__(text)
        self.message = message


def losses_to_plain(losses: list[Loss]) -> list[dict]:
    """The records as plain dicts (for JSON)."""
    items("losses", losses, Loss, "Loss records")
    return [asdict(loss) for loss in losses]


def render_json(losses: list[Loss], **extra) -> str:
    """A JSON document ``{"losses": [...], **extra}``."""
    items("losses", losses, Loss, "Loss records")
    return json.dumps({**extra, "losses": losses_to_plain(losses)}, ensure_ascii=False, indent=1)


def render_text(losses: list[Loss]) -> str:
    """One line per loss, ids-changing ones marked; a summary line when there are none."""
    items("losses", losses, Loss, "Loss records")
    if not losses:
        return "no losses: the .mtok holds everything the conversion reads"
    n = sum(1 for loss in losses if loss.may_change_tokenization)
    lines = [f"{len(losses)} loss(es), {n} may change tokenization:"]
    lines += [f"  {'!' if loss.may_change_tokenization else '-'} {loss}" for loss in losses]
    return "\n".join(lines)


UNCHECKED = "tokenizer.json holds a malformed value in a field without a check of its own"
"""How a refusal that no field check made begins (tests/test_fuzz.py asserts none happens)."""


@contextmanager
def refusing() -> Iterator[None]:
    """A conversion's body: a library error of the runtimes it runs (a pattern past a bound ...) or
    a malformed field no check names becomes a :class:`ConversionError` (the error contract)."""
    try:
        yield
    except ConversionError:
        raise
    except Error as e:
        raise ConversionError(f"{type(e).__name__}: {e}") from e
    except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError, RecursionError) as e:
        # the checks name each field the fuzzer (tools/fuzz/) has found malformed; this keeps a
        # field none of them covers a refusal too
        raise ConversionError(f"{UNCHECKED} ({type(e).__name__}: {e})") from e
