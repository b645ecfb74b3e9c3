"""Where MNN's C++ tokenizer encodes or decodes differently from HF `tokenizers`.

Each rule's ``mnn_ref`` is a path and line in alibaba/MNN at the commit the reference outputs were
recorded with (``mtokspec.runtime.mnn.MNN_COMMIT``).  Examples with ids are the corpus files' (or
the hand-made file named), as the ``hf`` and ``mnn`` semantics give them.
"""

from __future__ import annotations

from mtokspec.divergences._rule import Rule

_TOK = "transformers/llm/engine/src/tokenizer/tokenizer.cpp"
_UNI = "transformers/llm/engine/src/tokenizer/unicode.cpp"

RUNTIME_RULES: tuple[Rule, ...] = (
    # --- around the model ----------------------------------------------------------------------
    Rule("mnn-bos-twice", "post-processor",
         "encode() puts the header's prefix ids first and then applies the post-processor program to "
         "the whole list, so a file with both gets BOS twice (HF: once)",
         'prefix [1], program [1, A], "Hi" = [22557]: HF [1, 22557], MNN [1, 1, 22557]', f"{_TOK}:225"),
    Rule("mnn-post-misread", "post-processor",
         "a program whose bytes after the count number exactly count x 4 is read as the older "
         "ids-only layout: sequence A, then the op bytes as u32 ids",
         "whisper's [50258, 50363, A, 50257]: HF adds those ids, MNN appends 3 garbage ids and drops the "
         "prefix", f"{_TOK}:2498"),
    Rule("mnn-special-split", "added tokens",
         "before the pipeline, the text is cut at every header special id's per-id decoded text "
         "(tried at each byte in header order, the first match wins), even where HF's added-token "
         "rules would not match it",
         'a special id whose token is "<s>" splits "a<s>b" although HF has no added token "<s>"',
         f"{_TOK}:225"),
    Rule("mnn-added-strip-ascii", "added tokens",
         "lstrip/rstrip of an added token eat ASCII white space only, and added tokens match "
         "earliest then longest",
         'rstrip token "<m>" on "<m>\\u3000x": HF eats U+3000, MNN keeps it', f"{_TOK}:1989"),
    # --- normalizers -------------------------------------------------------------------------------
    Rule("mnn-table-normalizer", "normalizer.Table",
         "a table normalizer maps code point by code point (no composition, no reordering) and "
         "turns control and format characters (C0/C1 controls but tab/CR/LF, ZWJ, ZWNJ, ZWSP, BOM, "
         "bidi marks, U+2060-2069, U+FFF0-FFF8) into a space",
         'NFKC table on "e\\u0301": HF "é" (composed), MNN "e\\u0301"; t5 "a\\u200db": HF [3, 9, 2, 115], MNN [3, 9, 3, 115]',
         f"{_TOK}:1121"),
    Rule("mnn-bert-normalizer", "normalizer.Bert",
         "BertNormalizer: clean_text drops only Cc, NUL and U+FFFD (HF: every C* category); "
         "lower-casing is one-to-one (HF: full lower-casing); accents go only with an NFD table; "
         "Unicode 15.0 categories",
         'clean_text on "a\\u200bb": HF "ab", MNN "a\\u200bb"; lowercase "İ": HF "i̇", MNN "İ"',
         f"{_TOK}:1252"),
    Rule("mnn-strip-normalizer", "normalizer.Strip",
         "Strip removes ASCII white space and category Zs only (HF: every White_Space character, "
         "e.g. U+0085, U+2028)",
         'strip_right on "a\\u2028": HF "a", MNN "a\\u2028"', f"{_TOK}:1176"),
    # --- pre-tokenizers ----------------------------------------------------------------------------
    Rule("mnn-digits-no-split", "pre-tokenizer.Digits",
         "Digits(individual_digits=false) does not split at all (HF splits digit runs off); with "
         "individual digits only ASCII 0-9 count as digits",
         'Digits(false) on "ab12": HF ["ab", "12"], MNN ["ab12"]', f"{_TOK}:1396"),
    Rule("mnn-metaspace-every-split", "pre-tokenizer.Metaspace",
         "Metaspace prepends the replacement to every split that does not start with a space (HF: "
         "only the first, with prepend_scheme first)",
         'Split then Metaspace on "a-b": HF ["▁a", "-", "b"], MNN ["▁a", "▁-", "▁b"]', f"{_TOK}:1424"),
    Rule("mnn-regex-engine", "pre-tokenizer.Split/ByteLevel",
         "split patterns run on text folded to one byte per character class: a non-ASCII literal "
         "stands for its whole class, \\p{..} reads only the property's first letter, groups do "
         "not backtrack, lazy is greedy, alternatives with \\b, look-ahead (?=, look-behind or "
         "back-references are dropped; a pattern with non-ASCII and no \\p{ goes to std::wregex",
         'Split "[é\\p{N}]" isolated on "aüb": HF no match, MNN ["a", "ü", "b"] (é stands for any non-ASCII letter)',
         f"{_UNI}:77"),
    Rule("mnn-bert-pretokenizer", "pre-tokenizer.Bert",
         "BertPreTokenizer uses Unicode 15.0 categories and ASCII/Zs white space (HF: its own "
         "Unicode version and White_Space)",
         'on "a\\u2028b": HF ["a", "b"], MNN ["a\\u2028b"]', f"{_TOK}:1468"),
    # --- models ------------------------------------------------------------------------------------
    Rule("mnn-bpe-merges", "model.BPE",
         "BPE merges adjacent ids by rank and stops for the whole split at the first merge whose "
         "joined text is not a token; characters not in the vocabulary fall back to <0xHH> pieces "
         "whatever byte_fallback says, else are dropped (HF: unk or error)",
         'merge (a, b) -> "ab" missing from the vocabulary: HF refuses the file, MNN stops merging',
         f"{_TOK}:1570"),
    Rule("mnn-wordpiece-bytes", "model.WordPiece",
         "WordPiece matches over bytes (a piece may end inside a character), never matches the unk "
         "token itself, and the length limit counts bytes",
         'max_input_chars_per_word=5 on "ééé" (6 bytes): HF 3 pieces, MNN [UNK]', f"{_TOK}:1648"),
    Rule("mnn-unigram-bytes", "model.Unigram",
         "Unigram's lattice runs over byte offsets with its own tie-breaking and unknown handling: "
         "an offset no piece reaches takes the unknown id for the character before it; adjacent "
         "unknowns fuse",
         'pieces b"\\xc3" and b"\\xa9" (the two bytes of é): "é" HF [unk], MNN the two pieces',
         f"{_TOK}:1723"),
    # --- decoding ----------------------------------------------------------------------------------
    Rule("mnn-decode-skips-special", "decoder",
         "decode(ids) always drops the header's special ids (HF keeps them unless asked)",
         'bert decode([101, 1188, 102]): HF "[CLS] This [SEP]", MNN "This"', f"{_TOK}:2037"),
    Rule("mnn-decoder-chain", "decoder",
         "the decoder chain differs: WordPiece joins without HF's cleanup, Metaspace replaces "
         "multi-byte replacements byte-wise, Strip takes its content once at each end, ByteFallback "
         "accepts any <0x.. prefix",
         'WordPiece decode of ["a", "\'", "s"]: HF "a\'s", MNN "a \' s"', f"{_TOK}:1815"),
    Rule("mnn-wordpiece-cleanup", "decoder.WordPiece",
         "after a WordPiece decoder the space before . ? ! , is always removed (HF: only with "
         "cleanup, which also joins \" ' \", \" n't\", ...)",
         'cleanup=false, "a ." : HF "a .", MNN "a."', f"{_TOK}:2037"),
    Rule("mnn-clean-up-spaces", "decoder",
         "decode applies clean_up_tokenization_spaces when the file's flag is set (HF tokenizers "
         "never does; transformers does)",
         'flag set, ids of "do", " n\'t": HF "do n\'t", MNN "don\'t"', f"{_TOK}:2037"),
    Rule("mnn-decode-raw-bytes", "decoder",
         "decoded bytes that are not UTF-8 are returned as they are (HF: U+FFFD)",
         'byte-level ids of "½" cut in two: HF "\\ufffd", MNN b"\\xbd"', f"{_TOK}:2037"),
    Rule("mnn-stream-decode", "decoder (engine)",
         "the engine prints each id's decode(id) alone: every ▁ becomes a space (the first one "
         "too), <0xHH> becomes a byte anywhere in a token, every WordPiece token that is not a "
         "continuation gets a space before it, no Strip/Fuse, special ids are printed",
         't5 stream of "▁Hello": HF "Hello", MNN " Hello"', f"{_TOK}:2069"),
    Rule("mnn-unk-decode", "decoder",
         "decode looks every id up in the model's vocabulary only: an id outside it (an added token "
         "the vocabulary lacks) decodes as the unk token (WordPiece, Unigram) or as nothing (BPE)",
         'WordPiece decode([99999]): HF "", MNN "[UNK]"', f"{_TOK}:1640"),
    # --- the legacy tokenizer.txt types -----------------------------------------------------------
    Rule("mnn-legacy-sentencepiece", "legacy.type0",
         "type 0 runs MNN's own SentencePiece BPE over '▁' + text with spaces as '▁': pieces merge by "
         "their float32 scores (leftmost first when they tie, as with a Unigram model's file whose "
         "scores are all 0), byte fallback is always on, and unknown text gets the piece typed 2 or id 0",
         't5 mnn.txt (scores all 0, no unknown piece) " naïve": MNN [3, 3, 29, 9, 0, 0, 162], ï as id 0 per byte', f"{_TOK}:462"),
    Rule("mnn-legacy-tiktoken-greedy", "legacy.type1",
         "type 1 is encoded by greedy longest match over the whole text, not by BPE ranks",
         'whisper mnn.txt "tokenizer": BPE ["t", "oken", "izer"], MNN ["to", "ken", "izer"]', f"{_TOK}:532"),
    Rule("mnn-legacy-bert", "legacy.type2",
         "type 2 has its own splitter: ASCII letters and digits lower-cased (a cased vocabulary "
         "loses), each non-ASCII character alone, no accent stripping; an uncovered word keeps its "
         "pieces and ends with [UNK]",
         'bert mnn.txt "Which": HF [5979], MNN [1134] ("which")', f"{_TOK}:633"),
    Rule("mnn-legacy-gpt2-regex", "legacy.type3",
         "type 3 splits with a C-locale std::regex (only ASCII letters and digits are letters and "
         "digits) and merges with its own pair loop",
         'roberta mnn.txt " naïve": HF [39300], MNN ["Ġna", "Ã¯", "ve"] (ï is no letter in the C locale)', f"{_TOK}:959"),
    # --- predictions the lint makes (no corpus difference needed) --------------------------------
    Rule("mnn-bpe-quadratic", "model.BPE",
         "BPE without a pre-tokenizer runs MNN's merge loop over the whole text: each merge rescans "
         "every pair, so time grows with the square of the input length",
         "phi-3 (no pre-tokenizer): a 20 kB line takes seconds on a device", f"{_TOK}:1570"),
    Rule("mnn-unbounded-growth", "pipeline",
         "MNN bounds no stage: a pipeline whose steps grow the text and compound (a Replace whose "
         "content holds its pattern, repeated in a sequence; ByteLevel after ByteLevel; tables mapping a "
         "character to a longer string holding it) runs until the device runs out of memory; mtokspec "
         "refuses past max_expansion x the input (TokenizerError naming the stage)",
         'normalizer Sequence of 40 Replace("a" -> "aa"), text "a" x 64: MNN allocates 2^46 bytes; '
         "mtokspec refuses at the 14th step", f"{_TOK}:1219"),
    Rule("mnn-regex-backtracking", "pre-tokenizer.Split",
         "MNN's own regex engine and std::wregex backtrack without bound: a pattern repeating a group "
         "that holds a quantifier or an alternation ((a+)+, (a|aa)*) can take hours on a short text that "
         "almost matches (or overflow std::wregex's stack); mtokspec refuses within a second or two of "
         "work (UndefinedInMnn)",
         'Split("(a+)+é"), 31 characters: MNN never returns', "transformers/llm/engine/src/tokenizer/unicode.cpp:511"),
    Rule("mnn-undefined", "loader",
         "the file makes MNN read or write out of bounds or loop forever (an id outside its table, "
         "an empty Replace/Metaspace decoder pattern, byte fallback to a missing <0xHH> piece)",
         "decoder Replace with an empty pattern: MNN's decode never returns", f"{_TOK}:1815"),
)
