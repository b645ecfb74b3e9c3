"""The ``.mtok`` layout (MNN PIPELINE tokenizer, file type 4): the single place it is written.

Sources: what MNN's shipped exporter writes (``export_mtok`` in
https://github.com/alibaba/MNN/blob/4d40bdbd7efb73a58383bb5da867a6f41eb1776e/transformers/llm/export/utils/tokenizer.py)
and its loader reads (``PipelineTokenizer::load_vocab_binary`` in
https://github.com/alibaba/MNN/blob/4d40bdbd7efb73a58383bb5da867a6f41eb1776e/transformers/llm/engine/src/tokenizer/tokenizer.cpp);
each block's ``ref=`` links the lines.  All integers little-endian.  ``str`` = ``[u16 len][len bytes]``.

Adding a variant (a new tag of a union), in this order:

1. here: a ``Record`` under the union's next tag, with a doc for it and each field, and ``ref=``;
2. ``python -m tools.generate`` (tree class, codec, FORMAT.md, mtok.ksy) and ``python -m tools.diagram``;
3. ``mtokspec/runtime/hf`` and ``mtokspec/runtime/mnn``: a class in the union's ``REGISTRY`` of both
   runtimes (normalizers, pre_tokenizers, models, decoders);
4. ``mtokspec/divergences/rules``: where MNN differs on it, a rule (or the construct in an existing
   rule's ``applies`` and ``predict``), so explain and the lint know it;
5. ``mtokspec/convert``: the HF mapping both ways (``convert/hf``, ``to_hf``);
6. ``mtokspec/format/inspect.py``: its ``inspect`` line;
7. ``mtokspec/testing/strategies.py``: a strategy, in the union's leaves and in ``variants``.

``tests/test_variants.py`` fails until steps 3-7 are done for every union member.
"""

from __future__ import annotations

import construct as c

from ._dsl import (
    Bytes16,
    Count,
    End,
    Enum,
    Flag,
    HeaderLines,
    List,
    PostProcessorLayouts,
    Record,
    Row,
    Tail,
    Text16,
    Text32,
    Union,
    When,
    f64,
    u8,
    u16,
    u32,
)

MAGIC = 430
PIPELINE = 4
MAX_NESTING = 32  # Sequence-in-Sequence depth; real files use 2.

MNN_COMMIT = "4d40bdbd7efb73a58383bb5da867a6f41eb1776e"
"""The MNN source this layout is read from (every ``ref=`` links it); the ``mnn`` semantics models
the same commit (``generated/tree.py`` carries it to ``mtokspec.runtime.mnn.MNN_COMMIT``)."""
_MNN = f"https://github.com/alibaba/MNN/blob/{MNN_COMMIT}/transformers/llm"
LOADER = _MNN + "/engine/src/tokenizer/tokenizer.cpp"
EXPORTER = _MNN + "/export/utils/tokenizer.py"

Header = HeaderLines(MAGIC, PIPELINE, ref=(LOADER + "#L86-L95", EXPORTER + "#L252-L276"))

# --- Unicode normalisation table -------------------------------------------------------------
NormTable = List(
    u32,
    Row(
        "codepoint" / u32 * "the code point whose normal form differs from itself",
        "normalized" / Bytes16 * "its normal form, UTF-8",
    ),
)
NORM_TABLE_DOC = (
    "ascending by code point (readers binary-search it); the exporter lists every code point "
    "0..0x10FFFF whose normal form differs from itself"
)

# --- Normalizer --------------------------------------------------------------------------------
Normalizer = Union(
    "Normalizer",
    u8,
    {
        0: Record("NoNormalizer", doc="No normalisation."),
        1: Record(
            "LegacyNFKCNormalizer",
            doc="NFKC without an embedded table (older files); readers use their own Unicode data.",
        ),
        2: Record(
            "PrependNormalizer",
            "prepend" / Text16 * "text put before the input (HF Prepend)",
            doc="HF `Prepend`.",
        ),
        3: Record(
            "ReplaceNormalizer",
            "pattern" / Text16 * "literal text to replace (the exporter writes '' for a Regex pattern)",
            "content" / Text16 * "replacement text",
            doc="HF `Replace` with a literal pattern.",
        ),
        4: Record(
            "SequenceNormalizer",
            "normalizers" / List(u32, c.LazyBound(lambda: Normalizer)) * "normalizers applied in order",
            doc="HF `Sequence`.",
        ),
        5: Record(
            "BertNormalizer",
            "clean_text" / Flag * "remove control characters, map white space to ' '",
            "handle_chinese_chars" / Flag * "put spaces around CJK ideographs",
            "strip_accents" / Flag * "strip accents (readers without a table cannot decompose)",
            "lowercase" / Flag * "lower-case the text",
            doc="HF `BertNormalizer` without an NFD table; also the exporter's `Lowercase` (0,0,0,1).",
        ),
        6: Record(
            "TableNormalizer",
            "table" / NormTable * NORM_TABLE_DOC,
            doc="Table-driven normalisation (the exporter embeds NFKC for NFKC/NFKD/Precompiled, NFC for NFC).",
        ),
        7: Record(
            "BertNFDNormalizer",
            "clean_text" / Flag * "remove control characters, map white space to ' '",
            "handle_chinese_chars" / Flag * "put spaces around CJK ideographs",
            "strip_accents" / Flag * "decompose with the NFD table, then drop marks (category Mn)",
            "lowercase" / Flag * "lower-case the text",
            "nfd_table" / When("strip_accents", NormTable) * ("NFD table, present only when strip_accents; " + NORM_TABLE_DOC),
            doc="HF `BertNormalizer` with an embedded NFD table; also the exporter's `StripAccents` (0,0,1,0).",
        ),
        8: Record(
            "StripNormalizer",
            "strip_left" / Flag * "strip leading white space",
            "strip_right" / Flag * "strip trailing white space",
            doc="HF `Strip` (not in the description; written by the exporter).",
        ),
    },
    doc="Normalizer: a u8 tag, then the variant's fields.",
    max_depth=MAX_NESTING,
    ref=(LOADER + "#L2241-L2305", EXPORTER + "#L280-L343"),
)

SplitBehavior = Enum(u8, "SplitBehavior", {
    0: ("Isolated", "each match is a piece of its own"),
    1: ("Removed", "matches are dropped"),
    2: ("MergedWithPrevious", "each match joins the piece before it"),
})

# --- Pre-tokenizer ------------------------------------------------------------------------------
PreTokenizer = Union(
    "PreTokenizer",
    u8,
    {
        0: Record("NoPreTokenizer", doc="No pre-tokenisation (also what the exporter writes for unsupported types)."),
        1: Record(
            "ByteLevelPreTokenizer",
            "use_regex" / Flag * "split with the GPT-2 pattern before the byte-to-unicode mapping",
            doc="HF `ByteLevel` (the exporter drops add_prefix_space and trim_offsets).",
        ),
        2: Record(
            "DigitsPreTokenizer",
            "individual_digits" / Flag * "one split per digit (else per run of digits)",
            doc="HF `Digits`.",
        ),
        3: Record(
            "MetaspacePreTokenizer",
            "replacement" / Text16 * "the character that stands for a space, usually U+2581",
            "add_prefix_space" / Flag * "prepend the replacement to the first word",
            doc="HF `Metaspace` (the exporter drops prepend_scheme and split).",
        ),
        4: Record(
            "SplitPreTokenizer",
            "pattern" / Text16 * "regular expression or literal text (the file does not say which)",
            "invert" / Flag * "the pattern matches the pieces rather than the delimiters",
            "behavior" / SplitBehavior * "what happens to the matches (the exporter maps every other HF behaviour to Removed)",
            doc="HF `Split`; the exporter also writes `WhitespaceSplit` as Split('\\s+', 0, 1).",
        ),
        5: Record("BertPreTokenizer", doc="HF `BertPreTokenizer`: split on white space and punctuation."),
        6: Record(
            "SequencePreTokenizer",
            "pretokenizers" / List(u32, c.LazyBound(lambda: PreTokenizer)) * "pre-tokenizers applied in order",
            doc="HF `Sequence`.",
        ),
    },
    doc="Pre-tokenizer: a u8 tag, then the variant's fields.",
    max_depth=MAX_NESTING,
    ref=(LOADER + "#L2307-L2338", EXPORTER + "#L344-L388"),
)

# --- Model ---------------------------------------------------------------------------------------
VOCAB_DOC = ("sorted by token bytes (readers binary-search it; of equal texts the first is found); rows may "
             "share an id: each text looks it up, the last row is the text it decodes to")

Model = Union(
    "Model",
    u8,
    {
        0: Record(
            "BPEModel",
            "vocab_size" / Count(u32, "vocab") * "number of vocab entries",
            "byte_fallback" / Flag * "unknown characters become <0xXX> byte tokens",
            "byte_level" / Flag * "tokens are byte-level (GPT-2 byte-to-unicode) strings without a ByteLevel pre-tokenizer",
            "merge_size" / Count(u32, "merges") * "number of merges",
            "vocab" / List("vocab_size", Row(
                "token" / Bytes16 * "token bytes",
                "id" / u32 * "token id",
            )) * VOCAB_DOC,
            "merges" / List("merge_size", Row(
                "left" / u32 * "id of the left token",
                "right" / u32 * "id of the right token",
                "rank" / u32 * "priority: index in HF's merges list (lower merges first)",
            )) * "sorted by (left << 32) | right (readers binary-search it)",
            doc="Byte-pair encoding.",
        ),
        1: Record(
            "WordPieceModel",
            "vocab_size" / Count(u32, "vocab") * "number of vocab entries",
            "unk_token" / Text16 * "token for words that cannot be split, e.g. [UNK]",
            "continuing_subword_prefix" / Text16 * "prefix of non-initial pieces, e.g. ##",
            "max_input_chars_per_word" / u32 * "longer words become unk_token",
            "vocab" / List("vocab_size", Row(
                "token" / Bytes16 * "token bytes",
                "id" / u32 * "token id",
            )) * VOCAB_DOC,
            doc="WordPiece.",
        ),
        2: Record(
            "UnigramModel",
            "vocab_size" / Count(u32, "vocab") * "number of vocab entries",
            "unk_id" / u32 * "id of the unknown token",
            "byte_fallback" / Flag * "unknown characters become <0xXX> byte tokens",
            "vocab" / List("vocab_size", Row(
                "token" / Bytes16 * "piece bytes",
                "id" / u32 * "piece id",
                "score" / f64 * "log probability",
            )) * VOCAB_DOC,
            doc="Unigram language model (SentencePiece).",
        ),
    },
    doc="Model: a u8 tag, then the variant's fields.",
    ref=(LOADER + "#L2340-L2406", EXPORTER + "#L389-L489"),
)

# --- Decoder -------------------------------------------------------------------------------------
Decoder = Union(
    "Decoder",
    u8,
    {
        0: Record("ByteLevelDecoder", doc="HF `ByteLevel`; the exporter also writes it for a missing or unknown decoder."),
        1: Record("ByteFallbackDecoder", doc="HF `ByteFallback`: <0xXX> tokens back to bytes."),
        2: Record(
            "MetaspaceDecoder",
            "replacement" / Text16 * "the character that stands for a space",
            "add_prefix_space" / Flag * "drop the leading space of the first token",
            doc="HF `Metaspace`.",
        ),
        3: Record(
            "WordPieceDecoder",
            "prefix" / Text16 * "continuing-subword prefix to remove, e.g. ##",
            "cleanup" / Flag * "clean up tokenisation spaces",
            doc="HF `WordPiece`.",
        ),
        4: Record("FuseDecoder", doc="HF `Fuse`: join all tokens into one."),
        5: Record(
            "ReplaceDecoder",
            "pattern" / Text16 * "literal text to replace",
            "content" / Text16 * "replacement text",
            doc="HF `Replace`.",
        ),
        6: Record(
            "StripDecoder",
            "content" / Text16 * "the character to strip",
            "start" / u32 * "how many to strip at the start of each token",
            "stop" / u32 * "how many to strip at the end of each token",
            doc="HF `Strip`.",
        ),
        7: Record(
            "SequenceDecoder",
            "decoders" / List(u32, c.LazyBound(lambda: Decoder)) * "decoders applied in order",
            doc="HF `Sequence`.",
        ),
    },
    doc="Decoder: a u8 tag, then the variant's fields.",
    max_depth=MAX_NESTING,
    ref=(LOADER + "#L2407-L2441", EXPORTER + "#L490-L533"),
)

# --- Added tokens ----------------------------------------------------------------------------------
AddedToken = Record(
    "AddedToken",
    "id" / u32 * "token id",
    "special" / Flag * "a special token (skipped by decode(skip_special_tokens=True))",
    "lstrip" / Flag * "swallow white space on the left when matched",
    "rstrip" / Flag * "swallow white space on the right when matched",
    "content" / Text16 * "the token text, matched in the input before the model runs",
    doc="An entry of HF `added_tokens` (the exporter drops normalized and single_word).",
    ref=(LOADER + "#L2443-L2458", EXPORTER + "#L534-L546"),
)

# --- Post-processor program -------------------------------------------------------------------------
PostOp = Union(
    "PostOp",
    u8,
    {
        0: Record("SequenceOp", doc="op 0: the encoded sequence A goes here."),
        1: Record("SpecialTokenOp", "token_id" / u32 * "the id inserted", doc="op 1: insert a special id."),
    },
    doc="One op of the post-processor program.",
)
PostProcessor = PostProcessorLayouts(
    u16,
    legacy=Record(
        "LegacyPostProcessor",
        "ids" / List(u16, u32) * "ids appended after sequence A",
        doc="Older layout: [u16 count] [count x u32 id]; means sequence A, then these ids.",
        ref=(LOADER + "#L2492-L2508",),
    ),
    current=Record(
        "PostProcessorProgram",
        "ops" / List(u16, PostOp) * "the ops in order",
        doc="Current layout: [u16 count] then count ops (HF TemplateProcessing.single).",
        ref=(LOADER + "#L2492-L2529", EXPORTER + "#L584-L592"),
    ),
    op_union=PostOp,
)

# --- Format next: the extension section (read by a patched MNN; released MNN ignores it) -------------
EXTENSION_MAGIC = 0x3158_4E4D  # b"MNX1" little-endian

ExtensionField = Union(
    "ExtensionField",
    u8,
    {
        1: Record(
            "DecodeCleanupField",
            "cleanup" / Flag * "remove the space before . ? ! , in decode(ids) (HF's WordPiece decoder `cleanup`)",
            doc="Whether the sequence decode of a WordPiece decoder cleans up; released MNN always does. "
                "HF without a decoder joins tokens with spaces and no cleanup: a WordPiece decoder "
                "with this field 0.",
        ),
        2: Record(
            "StreamDecodeField",
            doc="The engine's per-id decode prints what HF's incremental decode (`DecodeStream`) "
                "prints: `decode(id)` keeps the ids since the last encode and returns what "
                "`decode(ids)` of them adds, nothing while that ends in an incomplete UTF-8 "
                "character. Released MNN decodes each id alone (a leading space on the first "
                "word, no decoder chain).",
        ),
        3: Record(
            "BPESuffixField",
            "end_of_word_suffix" / Text16 * "appended to the token of each word's last character, e.g. </w>",
            doc="HF BPE `end_of_word_suffix`: before the merges, the last character of each word (each "
                "pre-tokenized piece) is looked up with the suffix; without that token it is unknown "
                "(field 5's id, else dropped). Released MNN's BPE has no suffix.",
        ),
        4: Record(
            "BPEDecoderField",
            "suffix" / Text16 * "the end-of-word suffix, e.g. </w>",
            doc="HF `BPEDecoder`: decode(ids) replaces the suffix in each token by a space (in the last "
                "token by nothing) instead of running the decoder section. Released MNN has no such "
                "decoder.",
        ),
        5: Record(
            "BPEUnknownField",
            "unk_id" / u32 * "id of the unknown token",
            "fuse" / Flag * "one unknown id for a run of unknown characters (HF `fuse_unk`)",
            doc="HF BPE `unk_token`: a character no token covers (with the suffix of field 3 for a word's "
                "last one; a byte's character in a byte-level model) becomes the unknown id before the "
                "merges, unless the model's byte_fallback is set and every one of its bytes has a <0xHH> "
                "token (those are written instead). Released MNN's BPE drops such a character, or writes "
                "whichever byte tokens it finds.",
        ),
        6: Record(
            "UnigramTiesField",
            doc="HF's Unigram Viterbi: of the segmentations of equal score that end at an offset, the one "
                "whose last piece starts first (the longest last piece) is kept, so '111' over pieces "
                "'1' and '11' is ['1', '11']. Released MNN keeps the shortest last piece (['11', '1']).",
        ),
    },
    doc="One field of the extension: a u8 tag, then the field. Tags ascend; a reader stops at the "
        "first tag it does not know (every later field has a larger tag).",
)

Extension = Record(
    "Extension",
    "magic" / Enum(u32, "ExtensionMagic", {EXTENSION_MAGIC: ("MNX1", "format-next, version 1")})
    * "b'MNX1': a reader that finds another value ignores the section",
    "fields" / List(u16, ExtensionField) * "the fields, tags ascending, each at most once",
    doc="Format next: behaviour the released sections cannot state, after the post-processor. "
        "Released MNN stops reading after the post-processor's ops, so it ignores this section.",
)

MtokFlags = Enum(u8, "MtokFlags", {
    1: ("clean_up_tokenization_spaces", "transformers' clean_up_tokenization_spaces (exposed, not applied)"),
}, flags=True)

# --- The whole file --------------------------------------------------------------------------------
MtokFile = Record(
    "MtokFile",
    "header" / Header * "three text lines: magic and type, counts, ids",
    "normalizer" / Normalizer * "text normalisation",
    "pre_tokenizer" / PreTokenizer * "splitting before the model",
    "model" / Model * "the vocabulary and its algorithm",
    "decoder" / Decoder * "ids back to text",
    "added_tokens" / List(u32, AddedToken) * "tokens matched before the model",
    "chat_template" / Tail(Text32) * "Jinja chat template ([u32 len][bytes]); optional section",
    "eos_token" / Tail(Text16) * "EOS token text; optional section",
    "flags" / Tail(MtokFlags) * "bit flags; optional section",
    "bos_token" / Tail(Text16) * "BOS token text; optional section",
    "post_processor" / Tail(PostProcessor) * "single-sequence post-processor program; optional section",
    "extension" / Tail(Extension) * "format next: fields a patched MNN reads, released MNN ignores; optional section",
    End(),
    doc="A `.mtok` file: text header, binary body, optional trailing sections in this order.",
    ref=(LOADER + "#L2230-L2529", EXPORTER + "#L192-L594"),
)
