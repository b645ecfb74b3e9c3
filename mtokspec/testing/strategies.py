"""Hypothesis strategies for tokenizer-file trees, for property suites (ours and yours).

    from hypothesis import given
    from mtokspec.testing import strategies as mst

    @given(mst.mtok_files())
    def test_round_trip(tree):
        assert mtokspec.parse(mtokspec.build(tree)) == tree

Every strategy draws trees that ``mtokspec.build`` accepts.  With ``valid=True`` (the default) they
also pass ``mtokspec.validate`` without errors: sorted vocabularies, ids ``0..n-1``, merges sorted and
in range, sorted norm tables.
"""

from __future__ import annotations

import struct

try:
    from hypothesis import strategies as st
except ImportError as e:  # an optional extra
    raise ImportError("mtokspec.testing.strategies needs hypothesis: pip install 'mtokspec[testing]'") from e

from mtokspec.format import build
from mtokspec.format import tree as t
from mtokspec.names import SEMANTICS

__all__ = [
    "texts", "token_bytes", "norm_tables", "headers", "normalizers", "pre_tokenizers", "models",
    "bpe_models", "wordpiece_models", "unigram_models", "decoders", "added_tokens",
    "post_processors", "extensions", "mtok_files", "mtok_bytes", "variants", "txt_files", "txt_bytes", "runnable",
    "SPLIT_PATTERNS",
]

_U32 = st.integers(0, 2**32 - 1)
_SCALAR = st.integers(0, 0x10FFFF).filter(lambda cp: not 0xD800 <= cp <= 0xDFFF)


def texts(max_size: int = 12) -> st.SearchStrategy[str]:
    """Short text of any Unicode scalar values (what text fields of the format hold)."""
    return st.text(st.characters(codec="utf-8"), max_size=max_size)


def token_bytes(max_size: int = 8) -> st.SearchStrategy[bytes]:
    """Token bytes: mostly UTF-8 text, sometimes arbitrary bytes (vocab entries need not be UTF-8)."""
    return st.one_of(texts(max_size).map(lambda s: s.encode("utf-8")), st.binary(max_size=max_size))


def norm_tables(max_size: int = 8) -> st.SearchStrategy[list[tuple[int, bytes]]]:
    """Norm tables sorted by code point, normal forms UTF-8."""
    return st.dictionaries(_SCALAR, texts(4).map(lambda s: s.encode()), max_size=max_size).map(
        lambda d: sorted(d.items())
    )


@st.composite
def headers(draw: st.DrawFn, ids: st.SearchStrategy[int] = st.integers(0, 1000)) -> t.Header:
    special = draw(st.lists(ids, max_size=5))
    stop = draw(st.lists(ids, max_size=3))
    prefix = draw(st.lists(ids, max_size=2))
    return t.make_header(special, stop, prefix, trailing_space=draw(st.booleans()))


def _flags(n: int) -> st.SearchStrategy[tuple[bool, ...]]:
    return st.tuples(*[st.booleans()] * n)


def _normalizer_leaves() -> dict[type, st.SearchStrategy]:
    return {
        t.NoNormalizer: st.just(t.NoNormalizer()),
        t.LegacyNFKCNormalizer: st.just(t.LegacyNFKCNormalizer()),
        t.PrependNormalizer: st.builds(t.PrependNormalizer, prepend=texts()),
        t.ReplaceNormalizer: st.builds(t.ReplaceNormalizer, pattern=texts(), content=texts()),
        t.BertNormalizer: _flags(4).map(lambda f: t.BertNormalizer(*f)),
        t.TableNormalizer: st.builds(t.TableNormalizer, table=norm_tables()),
        t.BertNFDNormalizer: st.one_of(
            st.builds(lambda f, table: t.BertNFDNormalizer(f[0], f[1], True, f[2], table), _flags(3), norm_tables()),
            _flags(3).map(lambda f: t.BertNFDNormalizer(f[0], f[1], False, f[2], None)),
        ),
        t.StripNormalizer: _flags(2).map(lambda f: t.StripNormalizer(*f)),
    }


def normalizers(max_leaves: int = 6) -> st.SearchStrategy:
    """Every normalizer variant, Sequences nested a few levels."""
    return st.recursive(
        st.one_of(*_normalizer_leaves().values()),
        lambda children: st.lists(children, max_size=3).map(lambda xs: t.SequenceNormalizer(xs)),
        max_leaves=max_leaves,
    )


#: Split patterns both runtimes compile (HF's ``regex`` and MNN's own engine)
SPLIT_PATTERNS = (r"\s+", r"\d+", r"\p{L}+", r"[a-z]+", r" ?\p{L}+| ?\p{N}+|\s+", r"'s|'t|'re", r"\w+|[^\w\s]+")
_LITERAL = st.text("abcxyz -_,0123456789", min_size=1, max_size=4)  # no regex meta character


def _one_char() -> st.SearchStrategy[str]:
    return st.characters(codec="utf-8")


def _pre_tokenizer_leaves(valid: bool = True) -> dict[type, st.SearchStrategy]:
    """``valid``: a Metaspace replacement of one character and Split patterns both runtimes compile
    (else any text)."""
    return {
        t.NoPreTokenizer: st.just(t.NoPreTokenizer()),
        t.ByteLevelPreTokenizer: st.booleans().map(t.ByteLevelPreTokenizer),
        t.DigitsPreTokenizer: st.booleans().map(t.DigitsPreTokenizer),
        t.MetaspacePreTokenizer: st.builds(t.MetaspacePreTokenizer, replacement=_one_char() if valid else texts(2),
                                           add_prefix_space=st.booleans()),
        t.SplitPreTokenizer: st.builds(t.SplitPreTokenizer,
                                       pattern=st.one_of(st.sampled_from(SPLIT_PATTERNS), _LITERAL) if valid else texts(),
                                       invert=st.booleans(), behavior=st.integers(0, 2)),
        t.BertPreTokenizer: st.just(t.BertPreTokenizer()),
    }


def pre_tokenizers(max_leaves: int = 6, valid: bool = True) -> st.SearchStrategy:
    """Every pre-tokenizer variant, Sequences nested a few levels (``valid``: both runtimes load them)."""
    return st.recursive(
        st.one_of(*_pre_tokenizer_leaves(valid).values()),
        lambda children: st.lists(children, max_size=3).map(lambda xs: t.SequencePreTokenizer(xs)),
        max_leaves=max_leaves,
    )


@st.composite
def _vocab(draw: st.DrawFn, max_size: int, valid: bool) -> tuple[list[bytes], list[int]]:
    """Unique tokens sorted by bytes, ids a permutation of 0..n-1."""
    tokens = sorted(draw(st.sets(token_bytes(), max_size=max_size)))
    ids = draw(st.permutations(range(len(tokens)))) if valid else draw(st.lists(_U32, min_size=len(tokens), max_size=len(tokens)))
    return tokens, list(ids)


@st.composite
def bpe_models(draw: st.DrawFn, max_vocab: int = 12, max_merges: int = 12, valid: bool = True) -> t.BPEModel:
    tokens, ids = draw(_vocab(max_vocab, valid))
    n = len(tokens)
    merges: list[tuple[int, int, int]] = []
    if n:
        pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=max_merges))
        ranks = draw(st.permutations(range(len(pairs))))
        merges = sorted((a, b, r) for (a, b), r in zip(pairs, ranks))
    return t.BPEModel(draw(st.booleans()), draw(st.booleans()), list(zip(tokens, ids)), merges)


@st.composite
def wordpiece_models(draw: st.DrawFn, max_vocab: int = 12, valid: bool = True) -> t.WordPieceModel:
    tokens, ids = draw(_vocab(max_vocab, valid))
    unk = draw(texts(6))
    if valid and unk.encode() not in tokens:
        tokens = sorted(tokens + [unk.encode()])
        ids = list(range(len(tokens)))
    return t.WordPieceModel(unk, draw(texts(3)), draw(st.integers(0, 2**32 - 1)), list(zip(tokens, ids)))


_SCORES = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def unigram_models(draw: st.DrawFn, max_vocab: int = 12, valid: bool = True) -> t.UnigramModel:
    tokens, ids = draw(_vocab(max_vocab, valid))
    scores = draw(st.lists(_SCORES, min_size=len(tokens), max_size=len(tokens)))
    unk = draw(st.integers(0, max(len(tokens) - 1, 0))) if valid else draw(_U32)
    return t.UnigramModel(unk, draw(st.booleans()), [(a, b, c) for a, b, c in zip(tokens, ids, scores)])


def models(valid: bool = True) -> st.SearchStrategy:
    """Every model variant."""
    return st.one_of(bpe_models(valid=valid), wordpiece_models(valid=valid), unigram_models(valid=valid))


def _decoder_leaves(valid: bool = True) -> dict[type, st.SearchStrategy]:
    """``valid``: one-character Metaspace and Strip contents, non-empty Replace patterns (else any text)."""
    one = _one_char() if valid else texts(2)
    return {
        t.ByteLevelDecoder: st.just(t.ByteLevelDecoder()),
        t.ByteFallbackDecoder: st.just(t.ByteFallbackDecoder()),
        t.MetaspaceDecoder: st.builds(t.MetaspaceDecoder, replacement=one, add_prefix_space=st.booleans()),
        t.WordPieceDecoder: st.builds(t.WordPieceDecoder, prefix=texts(3), cleanup=st.booleans()),
        t.FuseDecoder: st.just(t.FuseDecoder()),
        t.ReplaceDecoder: st.builds(t.ReplaceDecoder, pattern=texts().filter(bool) if valid else texts(),
                                    content=texts()),
        t.StripDecoder: st.builds(t.StripDecoder, content=one, start=_U32, stop=_U32),
    }


def decoders(max_leaves: int = 6, valid: bool = True) -> st.SearchStrategy:
    """Every decoder variant, Sequences nested a few levels (``valid``: both runtimes load them)."""
    return st.recursive(
        st.one_of(*_decoder_leaves(valid).values()),
        lambda children: st.lists(children, max_size=3).map(lambda xs: t.SequenceDecoder(xs)),
        max_leaves=max_leaves,
    )


def added_tokens(ids: st.SearchStrategy[int] = st.integers(0, 2**31 - 1)) -> st.SearchStrategy:
    return st.lists(
        st.builds(t.AddedToken, id=ids, special=st.booleans(), lstrip=st.booleans(),
                  rstrip=st.booleans(), content=texts(8).filter(bool)),
        max_size=4, unique_by=lambda a: a.id,
    )


def _legacy_ids_ok(ids: list[int]) -> bool:
    """Legacy ids whose bytes would not also read as a current program (build refuses those)."""
    from mtokspec.format.files import ops_fit

    raw = struct.pack(f"<H{len(ids)}I", len(ids), *ids)
    return bool(ids) and not ops_fit(raw, 2, len(raw), len(ids))


def post_processors(ids: st.SearchStrategy[int] = _U32) -> st.SearchStrategy:
    """Both layouts of the post-processor program."""
    op = st.one_of(st.just(t.SequenceOp()), ids.map(t.SpecialTokenOp))
    return st.one_of(
        st.lists(op, max_size=6).map(t.PostProcessorProgram),
        st.lists(ids, min_size=1, max_size=4).filter(_legacy_ids_ok).map(t.LegacyPostProcessor),
    )


def extension_fields() -> st.SearchStrategy[list[t.ExtensionField]]:
    """Format next's fields: each present or not, in ascending tag order."""
    return st.tuples(st.none() | st.booleans().map(t.DecodeCleanupField),
                     st.none() | st.just(t.StreamDecodeField()),
                     st.none() | texts(4).map(t.BPESuffixField),
                     st.none() | texts(4).map(t.BPEDecoderField),
                     st.none() | st.builds(t.BPEUnknownField, _U32, st.booleans()),
                     st.none() | st.just(t.UnigramTiesField())).map(
        lambda fs: [f for f in fs if f is not None])


def extensions() -> st.SearchStrategy[t.Extension]:
    """The format-next section (its magic, then any of its fields)."""
    return extension_fields().map(lambda fs: t.Extension(magic=int(t.ExtensionMagic.MNX1), fields=fs))


def _with_extension(tree: t.MtokFile, ext: t.Extension) -> t.MtokFile:
    """``tree`` carrying ``ext`` where released MNN would ignore it, else ``tree`` unchanged."""
    from dataclasses import replace

    from mtokspec.format.extension import extension_refusal, extension_size

    withext = replace(tree, extension=ext)
    return tree if extension_refusal(withext, extension_size(ext)) is not None else withext


@st.composite
def mtok_files(draw: st.DrawFn, valid: bool = True) -> t.MtokFile:
    """Whole ``.mtok`` trees: every union variant, and every count of optional trailing sections.
    ``valid=True``: no error-level validate finding, and both runtimes load them (``Tokenizer.from_tree``
    with ``semantics="hf"`` and ``"mnn"``); encoding may still be refused (see :func:`runnable`)."""
    model = draw(models(valid))
    n = len(model.vocab)
    known = st.integers(0, n - 1) if (valid and n) else st.integers(0, 1000)
    tails = draw(st.integers(0, 5))
    values = [
        draw(st.text(st.characters(codec="utf-8"), max_size=40)),
        draw(texts()),
        draw(st.integers(0, 1) if valid else st.integers(0, 255)),
        draw(texts()),
        draw(post_processors(known)),
    ]
    values = values[:tails] + [None] * (5 - tails)
    tree = t.MtokFile(
        header=draw(headers(known)),
        normalizer=draw(normalizers()),
        pre_tokenizer=draw(pre_tokenizers(valid=valid)),
        model=model,
        decoder=draw(decoders(valid=valid)),
        added_tokens=draw(added_tokens(known if valid and n else st.integers(0, 2**31 - 1))),
        chat_template=values[0],
        eos_token=values[1],
        flags=values[2],
        bos_token=values[3],
        post_processor=values[4],
    )
    return _with_extension(tree, draw(extensions())) if draw(st.booleans()) else tree


@st.composite
def runnable(draw: st.DrawFn, max_text: int = 24) -> tuple[t.MtokFile, str]:
    """A valid ``.mtok`` tree and a text for it that both runtimes load, encode (with and without
    special tokens) and decode without an error; the text is drawn mostly from the characters of
    the vocabulary, so it tokenizes into real pieces."""
    from hypothesis import assume

    from mtokspec.errors import Error
    from mtokspec.tokenizer import load

    tree = draw(mtok_files())
    assume(len(tree.model.vocab) > 0)  # else an unknown id that is no token
    alphabet = sorted({c for row in tree.model.vocab for c in row[0].decode("utf-8", "ignore")} | {" "})
    text = draw(st.one_of(st.text(st.sampled_from(alphabet), max_size=max_text), texts(max_text)))
    try:
        for semantics in SEMANTICS:
            tok = load(tree, semantics=semantics)
            for special in (False, True):
                tok.decode(tok.encode(text, add_special_tokens=special))
    except Error:
        assume(False)
    return tree, text


def mtok_bytes(valid: bool = True) -> st.SearchStrategy[bytes]:
    """The bytes of :func:`mtok_files` trees."""
    return mtok_files(valid).map(build)


def variants(cls: type) -> st.SearchStrategy:
    """Trees of exactly one variant class, e.g. ``variants(tree.SequenceNormalizer)``."""
    table: dict[type, st.SearchStrategy] = {
        **_normalizer_leaves(), **_pre_tokenizer_leaves(), **_decoder_leaves(),
        t.SequenceNormalizer: st.lists(normalizers(4), max_size=3).map(t.SequenceNormalizer),
        t.SequencePreTokenizer: st.lists(pre_tokenizers(4), max_size=3).map(t.SequencePreTokenizer),
        t.SequenceDecoder: st.lists(decoders(4), max_size=3).map(t.SequenceDecoder),
        t.BPEModel: bpe_models(), t.WordPieceModel: wordpiece_models(), t.UnigramModel: unigram_models(),
        t.SequenceOp: st.just(t.SequenceOp()),
        t.DecodeCleanupField: st.booleans().map(t.DecodeCleanupField),
        t.StreamDecodeField: st.just(t.StreamDecodeField()),
        t.BPESuffixField: texts(4).map(t.BPESuffixField),
        t.BPEDecoderField: texts(4).map(t.BPEDecoderField),
        t.BPEUnknownField: st.builds(t.BPEUnknownField, _U32, st.booleans()),
        t.UnigramTiesField: st.just(t.UnigramTiesField()),
        t.SpecialTokenOp: _U32.map(t.SpecialTokenOp),
        t.PostProcessorProgram: st.lists(st.one_of(st.just(t.SequenceOp()), _U32.map(t.SpecialTokenOp)),
                                         max_size=6).map(t.PostProcessorProgram),
        t.LegacyPostProcessor: st.lists(_U32, min_size=1, max_size=4).filter(_legacy_ids_ok).map(t.LegacyPostProcessor),
    }
    if cls not in table:
        raise KeyError(f"no strategy for {cls!r}: not a variant class of mtokspec.format.tree")
    return table[cls]


_SCORE_TEXT = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-100_000, 100_000).map(str),
)
_LINE = st.binary(max_size=10).filter(lambda b: b"\n" not in b)


@st.composite
def txt_files(draw: st.DrawFn, file_type: int | None = None, valid: bool = True) -> t.TokenizerFile:
    """Legacy ``tokenizer.txt`` trees of type 0-3 (``file_type`` picks one)."""
    kind = draw(st.integers(0, 3)) if file_type is None else file_type
    if kind == 0:
        pieces = draw(st.lists(st.tuples(token_bytes(), _SCORE_TEXT, st.integers(1, 6)), max_size=10))
        n = len(pieces)
    elif kind == 3:
        tokens = draw(st.lists(_LINE, max_size=10, unique=valid))
        n = len(tokens)
    else:
        tokens = draw(st.lists(st.binary(max_size=8), max_size=10, unique=valid))
        n = len(tokens)
    header = draw(headers(st.integers(0, n - 1) if (valid and n) else st.integers(0, 1000)))
    if kind == 0:
        return t.SentencePieceTxtFile(header=header, pieces=pieces)
    if kind == 1:
        return t.TiktokenTxtFile(header=header, tokens=tokens)
    if kind == 2:
        return t.BertTxtFile(header=header, tokens=tokens)
    if valid:
        pairs = draw(st.lists(st.tuples(st.sampled_from(tokens), st.sampled_from(tokens)), max_size=6)) if tokens else []
        merges = [a + b" " + b for a, b in pairs if b" " not in a + b and a + b in tokens]
    else:
        merges = draw(st.lists(_LINE, max_size=8))
    if draw(st.booleans()):
        merges = [b"#version: 0.2"] + merges
    final_newline = draw(st.booleans()) if merges and merges[-1] else True
    return t.HuggingFaceTxtFile(header=header, tokens=tokens, merges=merges, final_newline=final_newline)


def txt_bytes(file_type: int | None = None) -> st.SearchStrategy[bytes]:
    """The bytes of :func:`txt_files` trees."""
    return txt_files(file_type).map(build)
