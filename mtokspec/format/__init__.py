"""The format wing: the bytes of ``.mtok`` and ``tokenizer.txt`` files as a typed tree.

``parse``/``build`` run the codec generated from ``spec/``; :mod:`~mtokspec.format.tree` holds the
tree types, :mod:`~mtokspec.format.validate` the semantic checks, :mod:`~mtokspec.format.inspect`
the section summary and :mod:`~mtokspec.format.plainio` the YAML/JSON form.  Nothing here runs a
tokenizer.
"""

from __future__ import annotations

from mtokspec.format.files import build, parse

__all__ = ["parse", "build"]
