"""The tokenizer part of ``lint --target mnn``: rules predicted from the file alone.

Each check below looks for the construct a rule of :mod:`mtokspec.divergences.runtime` is about,
and words the finding for this file.  Checks run on the tree; where a prediction needs the
runtime (what a special id decodes to, whether MNN's behaviour is undefined), both semantics are
built and asked.
"""

from __future__ import annotations

from mtokspec import tree as t
from mtokspec.runtime.mnn import regex as R
from mtokspec.runtime.mnn._text import utf8, walk
from mtokspec.validate import ERROR, INFO, WARNING, Finding

# MNN's merge loop over a whole text (no pre-tokenizer), measured with MNN's own C++ code (phi-3's
# vocabulary, one x86-64 core at -O2, 2026-12-01): characters -> seconds for one encode
QUADRATIC_MEASURED = ((1000, 0.044), (4000, 1.33), (16000, 25.2))


class _Lint:
    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, severity: str, path: str, code: str, message: str) -> None:
        self.findings.append(Finding(severity, path, message, code))


def lint_mtok(tree: t.MtokFile) -> list[Finding]:
    lt = _Lint()
    mnn = _mnn_tokenizer(lt, tree)
    _header_and_post(lt, tree)
    if mnn is not None:
        _added(lt, tree, mnn)
    _normalizers(lt, tree)
    _pre_tokenizers(lt, tree)
    _model(lt, tree)
    _decoders(lt, tree)
    if tree.chat_template:
        from mtokspec.linter.chat_template import lint_chat_template

        lt.findings += lint_chat_template(tree.chat_template, bos_token=tree.bos_token or "")
    return lt.findings


def _mnn_tokenizer(lt: _Lint, tree):
    """The file as MNN runs it, built once for the checks that ask it; ``None`` (and a finding)
    when MNN's loader has no defined behaviour on the file."""
    from mtokspec.runtime.mnn import MnnTokenizer, UndefinedInMnn

    try:
        return MnnTokenizer.from_tree(tree)
    except UndefinedInMnn as e:
        lt.add(ERROR, "model.vocab", "mnn-undefined", str(e))
        return None


def _header_and_post(lt: _Lint, tree: t.MtokFile) -> None:
    from mtokspec.runtime.mnn.tokenizer import post_program_ops, written_ops

    pp = tree.post_processor
    h = tree.header
    prefix = h.ids[h.special_count + h.stop_count:h.special_count + h.stop_count + h.prefix_count]
    ops = post_program_ops(pp)
    if isinstance(pp, t.PostProcessorProgram) and pp.ops:
        written = written_ops(pp)
        if ops != written:
            lt.add(ERROR, "post_processor", "mnn-post-misread",
                   f"MNN reads this program as sequence A then the ids {[i for i in ops if i is not None]} "
                   f"(its bytes after the count number count x 4); every encode(text) gets them instead of "
                   f"{['A' if op is None else op for op in written]}")
    inserted = [op for op in ops if op is not None]
    if prefix and inserted:
        twice = sorted(set(prefix) & set(inserted))
        lt.add(ERROR, "header.ids", "mnn-bos-twice",
               f"MNN puts the prefix ids {prefix} first and then applies the post-processor program, "
               f"which inserts {inserted}" + (f": id(s) {twice} appear twice" if twice else "")
               + " in every encode(text) (HF applies one of them)")


def _added(lt: _Lint, tree: t.MtokFile, mnn) -> None:
    from mtokspec.runtime.mnn import UndefinedInMnn

    try:
        specials = mnn._specials()
    except UndefinedInMnn:
        return
    contents = {utf8(a.content) for a in tree.added_tokens}
    odd = [(s, i) for s, i in specials if s not in contents]
    if odd:
        shown = ", ".join(f"{i}: {s.decode('utf-8', 'replace')!r}" for s, i in odd[:5])
        lt.add(WARNING, "header.ids", "mnn-special-split",
               f"MNN cuts the text at the per-id decoded text of every special id before tokenizing; "
               f"{len(odd)} of them are not an added token's content ({shown}{', ...' if len(odd) > 5 else ''}): "
               "text containing them is split where HF does not split it")
    stripped = [k for k, a in enumerate(tree.added_tokens) if a.lstrip or a.rstrip]
    if stripped:
        lt.add(WARNING, f"added_tokens[{stripped[0]}]", "mnn-added-strip-ascii",
               f"{len(stripped)} added token(s) strip white space beside them; MNN strips ASCII white space only "
               "(HF also U+00A0, U+3000, U+0085, ...)")


def _normalizers(lt: _Lint, tree: t.MtokFile) -> None:
    for node, path in walk(tree.normalizer, "normalizer"):
        if isinstance(node, t.TableNormalizer) and node.table:
            lt.add(WARNING, path, "mnn-table-normalizer",
                   "MNN maps code point by code point through this table (no composition or reordering) "
                   "and turns control and format characters (ZWJ, ZWSP, BOM, bidi marks, C1 controls) into "
                   "a space")
        elif isinstance(node, (t.BertNormalizer, t.BertNFDNormalizer)) and (node.clean_text or node.lowercase):
            lt.add(WARNING, path, "mnn-bert-normalizer",
                   "MNN's BertNormalizer keeps format characters (Cf) HF's clean_text drops and lower-cases "
                   "one code point to one (HF: full lower-casing, e.g. 'İ')")
        elif isinstance(node, t.StripNormalizer) and (node.strip_left or node.strip_right):
            lt.add(INFO, path, "mnn-strip-normalizer",
                   "MNN strips ASCII white space and Zs only (HF also U+0085, U+2028, U+2029)")


def _pre_tokenizers(lt: _Lint, tree: t.MtokFile) -> None:
    nodes = list(walk(tree.pre_tokenizer, "pre_tokenizer"))
    splitting_before = False
    for node, path in nodes:
        if isinstance(node, t.DigitsPreTokenizer):
            if not node.individual_digits:
                lt.add(WARNING, path, "mnn-digits-no-split",
                       "Digits(individual_digits=false) does not split on MNN: digit runs stay joined to "
                       "the letters beside them (HF splits them off)")
            else:
                lt.add(INFO, path, "mnn-digits-no-split",
                       "MNN isolates ASCII digits only (HF: every numeric character)")
            splitting_before = True
        elif isinstance(node, t.MetaspacePreTokenizer):
            if node.add_prefix_space and splitting_before:
                lt.add(INFO, path, "mnn-metaspace-every-split",
                       "MNN prepends the replacement to every split that does not start with a space; HF "
                       "does so only with prepend_scheme 'always' (the file does not record the scheme)")
        elif isinstance(node, t.SplitPreTokenizer):
            _pattern(lt, path, node.pattern)
            splitting_before = True
        elif isinstance(node, t.ByteLevelPreTokenizer) and node.use_regex:
            lt.add(WARNING, path, "mnn-regex-engine",
                   "MNN runs the GPT-2 pattern on text folded to classes: U+0085, U+2028 and U+2029 are no "
                   "white space there (HF: \\s), so text around them splits differently")
            splitting_before = True
        elif isinstance(node, t.BertPreTokenizer):
            lt.add(INFO, path, "mnn-bert-pretokenizer",
                   "MNN splits on ASCII white space and Zs only (HF also U+0085, U+2028, U+2029)")
            splitting_before = True


def _pattern(lt: _Lint, path: str, pattern: str) -> None:
    p = pattern.encode("utf-8", "surrogatepass")
    if R.uses_wregex(p):
        lt.add(WARNING, f"{path}.pattern", "mnn-regex-engine",
               "this pattern holds non-ASCII characters and no \\p{..}: MNN runs it with C++ std::wregex "
               "(ECMAScript, C-locale classes), not a Unicode regex engine (mtokspec approximates it)")
        return
    if R.dropped_alternatives(p):
        lt.add(ERROR, f"{path}.pattern", "mnn-regex-engine",
               "MNN's regex engine drops the alternatives of this pattern that use \\b, \\B, \\A, \\Z, "
               "back-references, look-ahead (?=, look-behind or named groups (all of them: it uses GPT-2's "
               "pattern instead)")
    if not p.isascii():
        lt.add(WARNING, f"{path}.pattern", "mnn-regex-engine",
               "a non-ASCII character in this pattern stands for its whole class on MNN (a letter for "
               "every non-ASCII letter)")
    if any(q in pattern for q in ("*?", "+?", "??", "}?")):
        lt.add(WARNING, f"{path}.pattern", "mnn-regex-engine", "MNN matches lazy quantifiers greedily")


def _model(lt: _Lint, tree: t.MtokFile) -> None:
    m = tree.model
    if isinstance(m, t.BPEModel):
        if isinstance(tree.pre_tokenizer, t.NoPreTokenizer):
            (n1, t1), (n2, t2), (n3, t3) = QUADRATIC_MEASURED
            lt.add(WARNING, "pre_tokenizer", "mnn-bpe-quadratic",
                   "BPE without a pre-tokenizer: MNN merges over the whole text with a loop that rescans "
                   f"every pair, quadratic in its length (measured with MNN's code on one desktop core: "
                   f"{n1} characters {t1} s, {n2} {t2} s, {n3} {t3} s; a phone is slower)")
        if not m.byte_level:
            byte_pieces = sum(1 for tok, _ in m.vocab if len(tok) == 6 and tok.startswith(b"<0x") and tok.endswith(b">"))
            if byte_pieces and not m.byte_fallback:
                lt.add(WARNING, "model.byte_fallback", "mnn-bpe-merges",
                       f"byte_fallback is off but the vocabulary has {byte_pieces} <0xHH> pieces: MNN falls back "
                       "to them for characters not in the vocabulary anyway (HF: unk or dropped)")
    elif isinstance(m, t.WordPieceModel):
        if any(not tok.isascii() for tok, _ in m.vocab):
            lt.add(WARNING, "model", "mnn-wordpiece-bytes",
                   "MNN's WordPiece matches bytes and counts max_input_chars_per_word "
                   f"({m.max_input_chars_per_word}) in bytes: non-ASCII words reach the limit 2-4x sooner "
                   "and become the unknown token")
    elif isinstance(m, t.UnigramModel):
        if m.byte_fallback:
            have = {tok for tok, _, _ in m.vocab}
            missing = [b for b in range(256) if b"<0x%02X>" % b not in have]
            if missing:
                lt.add(ERROR, "model.byte_fallback", "mnn-undefined",
                       f"byte_fallback is on but {len(missing)} of the 256 <0xHH> pieces are missing: for such a "
                       "byte MNN's Unigram reads scores[-1], out of bounds")
        lt.add(WARNING, "model", "mnn-unigram-bytes",
               "MNN's Unigram lattice runs over bytes with its own unknown handling: characters the "
               "vocabulary lacks are segmented differently from HF")


def _decoders(lt: _Lint, tree: t.MtokFile) -> None:
    nodes = list(walk(tree.decoder, "decoder"))
    for node, path in nodes:
        if isinstance(node, t.ReplaceDecoder) and not node.pattern:
            lt.add(ERROR, path, "mnn-undefined",
                   "a Replace decoder with an empty pattern (the exporter writes a Regex pattern so): MNN's "
                   "decode never returns")
        if isinstance(node, t.MetaspaceDecoder) and not node.replacement:
            lt.add(ERROR, path, "mnn-undefined",
                   "a Metaspace decoder with an empty replacement: MNN's decode never returns")
    leading = [p for n, p in nodes if isinstance(n, t.MetaspaceDecoder) and n.add_prefix_space]
    wp = [p for n, p in nodes if isinstance(n, t.WordPieceDecoder)]
    strip = [p for n, p in nodes if isinstance(n, (t.StripDecoder, t.FuseDecoder))]
    meta = "\u2581".encode()
    meta_in_tokens = isinstance(tree.model, (t.BPEModel, t.UnigramModel)) and any(
        row[0].startswith(meta) for row in tree.model.vocab)
    if wp:
        wp_node = next(n for n, _ in nodes if isinstance(n, t.WordPieceDecoder))
        vocab = [row[0] for row in getattr(tree.model, "vocab", [])]
        # HF's cleanup runs on each token with its space: " n't" needs a token starting with n't
        joined = [tok for tok in vocab if tok.startswith((b"n't", b"'m", b"'s", b"'ve", b"'re", b"do not"))]
        if wp_node.cleanup and joined:
            lt.add(WARNING, wp[0], "mnn-decoder-chain",
                   f"MNN's WordPiece decoder joins tokens without HF's cleanup: {len(joined)} tokens such as "
                   f"{joined[0].decode('utf-8', 'replace')!r} keep the space HF's cleanup removes before them")
        lt.add(WARNING, wp[0], "mnn-stream-decode",
               "the engine prints each id alone: every WordPiece token that is not a continuation, the "
               "first one too, gets a space before it, and ' .', ' ,' stay split")
        punct = any(tok[:1] in (b".", b"?", b"!", b",") for tok in vocab)
        lt.add(WARNING if punct and not wp_node.cleanup else INFO, wp[0], "mnn-wordpiece-cleanup",
               "MNN's decode(ids) removes the space before . ? ! , whatever the cleanup flag says"
               + (" (this decoder's cleanup is off: HF keeps it)" if punct and not wp_node.cleanup else ""))
    elif leading or (strip and meta_in_tokens):
        lt.add(WARNING, (leading or strip)[0], "mnn-stream-decode",
               "the engine prints each id alone: '▁' becomes a space in every token, so the printed text "
               "starts with a space the sequence decode strips")
    raw = [p for n, p in nodes if isinstance(n, (t.ByteLevelDecoder, t.ByteFallbackDecoder))]
    if raw:
        lt.add(INFO, raw[0], "mnn-decode-raw-bytes",
               "ids that end inside a character decode to bytes that are not UTF-8: MNN returns them as they "
               "are (HF: U+FFFD)")
    h = tree.header
    if h.special_count:
        lt.add(INFO, "header.ids", "mnn-decode-skips-special",
               f"MNN's decode(ids) always leaves out the {h.special_count} header special ids; the engine's "
               "streaming decode prints them")
    if (tree.flags or 0) & t.MtokFlags.clean_up_tokenization_spaces:
        lt.add(WARNING, "flags", "mnn-clean-up-spaces",
               "clean_up_tokenization_spaces is set: MNN's decode(ids) joins \" n't\", \" 's\", ... (as transformers "
               "does; HF tokenizers does not)")


# --- legacy tokenizer.txt ----------------------------------------------------------------------------

def lint_txt(tree) -> list[Finding]:
    lt = _Lint()
    _mnn_tokenizer(lt, tree)
    if isinstance(tree, t.SentencePieceTxtFile):
        spaced = sum(1 for tok, _, kind in tree.pieces if kind == 1 and tok.startswith(b" "))
        meta = sum(1 for tok, _, _ in tree.pieces if "\u2581".encode() in tok)
        scores = {score for _, score, _ in tree.pieces}
        if spaced and not meta:
            lt.add(ERROR, "pieces", "mnn-legacy-sentencepiece",
                   f"{spaced} pieces start with a space (the exporter replaced '▁' by ' ') while MNN's type 0 "
                   "encoder looks for '▁': no word-initial piece ever matches, ids differ on almost every text")
        elif len(tree.pieces) > 1 and len(scores) == 1:
            lt.add(ERROR, "pieces", "mnn-legacy-sentencepiece",
                   f"every piece has the score {next(iter(scores))} (as the exporter writes a Unigram model): "
                   "MNN's SentencePiece BPE then merges leftmost first, not by score, so ids "
                   "differ on almost every text")
        else:
            lt.add(WARNING, "pieces", "mnn-legacy-sentencepiece",
                   "type 0 runs MNN's own SentencePiece BPE (scores as float32, byte fallback always on)")
        if tree.pieces and not any(kind == 2 for _, _, kind in tree.pieces):
            lt.add(WARNING, "pieces", "mnn-legacy-sentencepiece",
                   f"no piece has type 2 (unknown): MNN uses id 0 ({tree.pieces[0][0]!r}) for unknown text "
                   "and its byte fallback")
    elif isinstance(tree, t.TiktokenTxtFile):
        lt.add(ERROR, "tokens", "mnn-legacy-tiktoken-greedy",
               "type 1 is encoded by greedy longest match over the whole text, not by BPE ranks: most "
               "texts get other ids than HF/tiktoken")
    elif isinstance(tree, t.BertTxtFile):
        cased = sum(1 for tok in tree.tokens if tok.isascii() and tok.lower() != tok)
        lt.add(ERROR if cased else WARNING, "tokens", "mnn-legacy-bert",
               "type 2 lower-cases ASCII letters always and splits with its own rules"
               + (f": this vocabulary is cased ({cased} tokens with capitals), so cased words lose" if cased else ""))
    elif isinstance(tree, t.HuggingFaceTxtFile):
        lt.add(WARNING, "tokens", "mnn-legacy-gpt2-regex",
               "type 3 splits with a C-locale regex: only ASCII letters and digits are letters and digits, "
               "so non-ASCII words split differently from HF")
    h = tree.header
    if h.prefix_count:
        lt.add(INFO, "header.ids", "mnn-bos-twice",
               "legacy files have no post-processor: MNN's encode(text) adds only the prefix ids")
    return lt.findings
