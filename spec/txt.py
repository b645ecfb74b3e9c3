"""The legacy ``tokenizer.txt`` layouts (MNN file types 0-3): the single place they are written.

Three header lines as in ``.mtok`` (``"430 <type>\\n"``), then one count line and one line per
entry.  Source: what MNN's shipped exporter writes (``export`` in
https://github.com/alibaba/MNN/blob/4d40bdbd7efb73a58383bb5da867a6f41eb1776e/transformers/llm/export/utils/tokenizer.py#L596-L876).
"""

from __future__ import annotations

from ._dsl import CountLine, End, FinalNewline, HeaderLines, LineColumn, LineTable, Record

MAGIC = 430

SentencePieceTxtFile = Record(
    "SentencePieceTxtFile",
    "header" / HeaderLines(MAGIC, 0) * "three text lines: magic and type 0, counts, ids",
    "count" / CountLine(("vocab_size", "pieces")) * "number of pieces",
    "pieces" / LineTable(
        "vocab_size",
        LineColumn("token", "base64", "the piece, base64 (the exporter writes U+2581 as a space)"),
        LineColumn("score", "word", "score as written (decimal text; a float)"),
        LineColumn("type", "int", "1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte"),
    ) * "one line per piece, line index = id: `base64 score type`",
    End(),
    doc="Type 0 SENTENCEPIECE: pieces with scores and piece types.",
)

TiktokenTxtFile = Record(
    "TiktokenTxtFile",
    "header" / HeaderLines(MAGIC, 1) * "three text lines: magic and type 1, counts, ids",
    "count" / CountLine(("vocab_size", "tokens")) * "number of tokens",
    "tokens" / LineTable(
        "vocab_size", LineColumn("token", "base64", "token bytes, base64 (an empty line is an empty token)"),
    ) * "one line per token, line index = id = BPE rank",
    End(),
    doc="Type 1 TIKTOKEN: byte-level BPE ranks.",
)

BertTxtFile = Record(
    "BertTxtFile",
    "header" / HeaderLines(MAGIC, 2) * "three text lines: magic and type 2, counts, ids",
    "count" / CountLine(("vocab_size", "tokens")) * "number of tokens",
    "tokens" / LineTable(
        "vocab_size", LineColumn("token", "base64", "token bytes, base64"),
    ) * "one line per token, line index = id (WordPiece, `##` marks continuations)",
    End(),
    doc="Type 2 BERT: a WordPiece vocabulary.",
)

HuggingFaceTxtFile = Record(
    "HuggingFaceTxtFile",
    "header" / HeaderLines(MAGIC, 3) * "three text lines: magic and type 3, counts, ids",
    "counts" / CountLine(("vocab_size", "tokens"), ("merge_size", "merges")) * "`vocab_count merge_count`",
    "tokens" / LineTable(
        "vocab_size", LineColumn("token", "raw", "the token as it is (byte-level text, not base64)"),
    ) * "one line per token, line index = id",
    "merges" / LineTable(
        "merge_size", LineColumn("line", "raw", "`left right`, or the `#version: 0.2` line copied from merges.txt"),
        final_newline="final_newline",
    ) * "the lines of merges.txt as the exporter copied them, in priority order",
    "final_newline" / FinalNewline() * "the last merge line ends with a newline (merges.txt may not)",
    End(),
    doc="Type 3 HUGGINGFACE: GPT-2 style byte-level BPE vocabulary and merges.",
)

ROOTS = {0: SentencePieceTxtFile, 1: TiktokenTxtFile, 2: BertTxtFile, 3: HuggingFaceTxtFile}
