"""The fidelity report card: one page per tokenizer saying how often MNN's runtime gives HF's answer.

:func:`collect_card` gathers a :class:`Card` (:mod:`.collect`, from mtokspec's comparisons),
:func:`render_html` / :func:`render_markdown` / :func:`render_json` write it (:mod:`.html`,
:mod:`.md`), and the ``*_index`` functions a page of several cards; :mod:`.device` reads MNN's
``test_tokenizer`` log and runs ``goldens`` files.  ``mtokspec report`` is the command.
"""

from __future__ import annotations

from mtokspec.report_card.collect import collect_card
from mtokspec.report_card.data import OUTPUTS, Card, DeviceResult

__all__ = ["collect_card", "Card", "DeviceResult", "OUTPUTS"]
