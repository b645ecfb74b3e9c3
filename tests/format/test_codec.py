"""The .mtok codec: corpus round trips, differential against the construct reference, fuzzing."""

from __future__ import annotations

import functools
import json
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.format import plainio
from mtokspec.testing import strategies as mst
from mtokspec.format import tree as t
from mtokspec._generated.tree import CLASSES, VARIANTS
from mtokspec.errors import MtokFormatError
from spec import ReferenceError, reference_build, reference_parse
from tests._support import corpus_mtok_files
from tests._support.codec import deadline, plain, tree_plain

# every test here runs on both paths of the codec and models: compiled and pure (conftest.runtime_path)
pytestmark = pytest.mark.usefixtures("runtime_path")

CORPUS_FILES = corpus_mtok_files()
corpus_param = pytest.mark.parametrize(
    "path", CORPUS_FILES or [pytest.param(None, marks=pytest.mark.skip(reason="../shared/corpus is absent"))],
    ids=[p.parent.name for p in CORPUS_FILES] or None,
)


# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


@corpus_param
def test_corpus_round_trip_and_validate(path):
    data = path.read_bytes()
    tree = mtokspec.parse(data)
    assert mtokspec.build(tree) == data
    assert mtokspec.parse(mtokspec.build(tree)) == tree
    findings = mtokspec.validate(tree)
    assert [f for f in findings if f.severity == "error"] == []
    assert "merge-output-missing" not in {f.code for f in findings}


def test_validate_reports_a_merge_whose_output_is_missing():
    vocab = [(b"a", 0), (b"ab", 2), (b"b", 1), (b"c", 3)]
    tree = t.MtokFile(model=t.BPEModel(vocab=vocab, merges=[(0, 1, 0), (1, 3, 1)]))
    found = [f for f in mtokspec.validate(tree) if f.code == "merge-output-missing"]
    assert [(f.severity, f.path) for f in found] == [("warning", "model.merges[1]")]
    assert "b'bc'" in found[0].message


@functools.lru_cache(maxsize=None)
def _reference_parse_plain(path) -> object:
    """The reference codec's reading of a corpus file (the same on both paths: read once)."""
    return plain(reference_parse(path.read_bytes()))


@functools.lru_cache(maxsize=None)
def _reference_build_of(document: str) -> bytes:
    return reference_build(json.loads(document))


@corpus_param
def test_corpus_matches_reference_codec(path):
    data = path.read_bytes()
    tree = mtokspec.parse(data)
    assert tree_plain(tree) == _reference_parse_plain(path)
    # the reference builds each distinct document once: the second path's equal document is not rebuilt
    document = json.dumps(mtokspec.to_dict(tree), ensure_ascii=False, sort_keys=True)
    assert _reference_build_of(document) == data


@corpus_param
def test_corpus_dump_formats_rebuild_bytes(path):
    data = path.read_bytes()
    doc = mtokspec.to_dict(mtokspec.parse(data))
    via_json = mtokspec.from_dict(json.loads(json.dumps(doc, ensure_ascii=False)))
    assert mtokspec.build(via_json) == data


def test_whisper_program_is_read_as_written(corpus):
    tree = mtokspec.parse((corpus / "tok" / "whisper.tiny" / "mnn.mtok").read_bytes())
    assert tree.post_processor == t.PostProcessorProgram(
        [t.SpecialTokenOp(50258), t.SpecialTokenOp(50363), t.SequenceOp(), t.SpecialTokenOp(50257)]
    )
    codes = {f.code for f in mtokspec.validate(tree)}
    assert "post-misread-by-mnn" in codes


# ---------------------------------------------------------------------------------------------
# Generated trees
# ---------------------------------------------------------------------------------------------


@settings(max_examples=150)
@given(mst.mtok_files(valid=False))
def test_tree_build_parse_round_trip(tree):
    data = mtokspec.build(tree)
    again = mtokspec.parse(data)
    assert again == tree
    assert mtokspec.build(again) == data


@settings(max_examples=60)
@given(mst.mtok_files())
def test_valid_trees_validate_clean_and_match_reference(tree):
    data = mtokspec.build(tree)
    assert [f for f in mtokspec.validate(data) if f.severity == "error"] == []
    assert plain(reference_parse(data)) == tree_plain(tree)
    assert reference_build(mtokspec.to_dict(tree)) == data


@settings(max_examples=40)
@given(mst.mtok_files(valid=False))
def test_plain_form_round_trips_through_yaml(tree):
    text = plainio.dump_yaml(mtokspec.to_dict(tree))
    assert mtokspec.from_dict(plainio.load_yaml(text)) == tree
    assert mtokspec.from_dict(plainio.load_json(plainio.dump_json(mtokspec.to_dict(tree)))) == tree


def _wrap(node):
    """A whole file holding ``node`` where its kind belongs."""
    kinds = {
        "Normalizer": "normalizer", "PreTokenizer": "pre_tokenizer", "Model": "model",
        "Decoder": "decoder", "PostProcessor": "post_processor",
    }
    union = VARIANTS[type(node).__name__][0]
    if union == "PostOp":
        return t.MtokFile(chat_template="", eos_token="", flags=0, bos_token="",
                          post_processor=t.PostProcessorProgram([node]))
    if union == "PostProcessor":
        return t.MtokFile(chat_template="", eos_token="", flags=0, bos_token="", post_processor=node)
    if union == "ExtensionField":
        return t.MtokFile(chat_template="", eos_token="", flags=0, bos_token="",
                          post_processor=t.PostProcessorProgram([t.SequenceOp()]),
                          extension=t.Extension(magic=int(t.ExtensionMagic.MNX1), fields=[node]))
    return t.MtokFile(**{kinds[union]: node})


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_round_trips(name):
    @settings(max_examples=25)
    @given(mst.variants(CLASSES[name]))
    def check(node):
        tree = _wrap(node)
        data = mtokspec.build(tree)
        assert mtokspec.parse(data) == tree
        assert plain(reference_parse(data)) == tree_plain(tree)

    check()


@pytest.mark.parametrize("tails", range(6))
def test_absent_and_empty_trailing_sections_differ(tails):
    values = ["", "", 0, "", t.PostProcessorProgram([])]
    kwargs = dict(zip(["chat_template", "eos_token", "flags", "bos_token", "post_processor"],
                      values[:tails] + [None] * (5 - tails)))
    tree = t.MtokFile(**kwargs)
    data = mtokspec.build(tree)
    assert mtokspec.parse(data) == tree
    assert len(data) == len(mtokspec.build(t.MtokFile())) + [0, 4, 6, 7, 9, 11][tails]


def test_header_spacing_and_duplicates_are_kept():
    for header in (t.make_header([0, 0, 5], [2], [1]), t.make_header([3, 3], [], [], trailing_space=True),
                   t.make_header()):
        tree = t.MtokFile(header=header)
        data = mtokspec.build(tree)
        assert mtokspec.parse(data).header == header
    data = mtokspec.build(t.MtokFile(header=t.make_header([7, 8], trailing_space=True)))
    assert data.startswith(b"430 4\n2 0 0\n7 8 \n")


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


def small_real_tree(corpus) -> t.MtokFile:
    """A small tree cut from a real one: t5-small (table normalizer, Sequence pre-tokenizer,
    Unigram, added tokens, every trailing section) with its tables shortened."""
    tree = mtokspec.parse((corpus / "tok" / "t5-small" / "mnn.mtok").read_bytes())
    tree.model.vocab = [(tok, i, score) for i, (tok, _, score) in enumerate(tree.model.vocab[:30])]
    tree.normalizer.table = tree.normalizer.table[:20]
    tree.added_tokens = tree.added_tokens[:3]
    tree.chat_template = "{{ messages }}"
    return tree


def small_real_file(corpus) -> bytes:
    return mtokspec.build(small_real_tree(corpus))


def test_every_truncation_fails_cleanly(corpus):
    tree = small_real_tree(corpus)
    data = mtokspec.build(tree)
    # the file may end where an optional trailing section would start
    names = ["chat_template", "eos_token", "flags", "bos_token", "post_processor"]
    boundaries = set()
    for k in range(5):
        shorter = t.MtokFile(**{f: getattr(tree, f) for f in tree.__slots__})
        for name in names[k:]:
            setattr(shorter, name, None)
        boundaries.add(len(mtokspec.build(shorter)))
    assert len(boundaries) == 5
    for n in range(len(data)):
        with deadline(1.0):
            if n in boundaries:
                assert data[:n] == mtokspec.build(mtokspec.parse(data[:n]))
                continue
            with pytest.raises(MtokFormatError) as info:
                mtokspec.parse(data[:n])
        err = info.value
        assert err.offset is not None and 0 <= err.offset <= n, (n, str(err))
        assert err.path


def test_truncation_names_offset_and_field(corpus):
    data = (corpus / "tok" / "roberta-base" / "mnn.mtok").read_bytes()
    tree = mtokspec.parse(data)
    header_len = data.index(b"\n", data.index(b"\n", 6) + 1) + 1
    # byte offset of vocab entry 1234's token: tags (normalizer, pre-tokenizer 2 bytes, model 11 bytes)
    p = header_len + 1 + 2 + 11
    for tok, _ in tree.model.vocab[:1234]:
        p += 2 + len(tok) + 4
    with pytest.raises(MtokFormatError) as info:
        mtokspec.parse(data[: p + 3])
    assert info.value.path == "model.vocab[1234].token"
    assert info.value.offset == p + 2
    assert f"at byte {p + 2}, model.vocab[1234].token" in str(info.value)


def test_random_byte_flips_only_raise_format_errors(corpus):
    data = bytearray(small_real_file(corpus))
    rng = random.Random(1234)
    for _ in range(3000):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        with deadline(1.0):
            try:
                tree = mtokspec.parse(bytes(mutated))
            except MtokFormatError:
                continue
        assert mtokspec.build(tree) == bytes(mutated)


@settings(max_examples=300)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_only_raise_format_errors(data):
    for prefix in (b"", b"430 4\n", b"430 4\n0 0 0\n\n"):
        try:
            tree = mtokspec.parse(prefix + data)
        except MtokFormatError:
            continue
        assert mtokspec.build(tree) == prefix + data


HEADER = b"430 4\n0 0 0\n\n"
EMPTY_BODY = b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" + b"\x00" + b"\x00\x00\x00\x00"


@pytest.mark.parametrize("count", [2**16 - 1, 2**31, 2**32 - 1])
@pytest.mark.parametrize("place", ["vocab", "merges", "added", "norm_table", "sequence", "chat_template"])
def test_huge_counts_are_refused_before_allocation(count, place):
    c32 = struct.pack("<I", count)
    model = b"\x00" + struct.pack("<I", 0) + b"\x00\x00" + struct.pack("<I", 0)
    body = {
        "vocab": b"\x00\x00" + b"\x00" + c32 + b"\x00\x00" + struct.pack("<I", 0),
        "merges": b"\x00\x00" + b"\x00" + struct.pack("<I", 0) + b"\x00\x00" + c32,
        "added": b"\x00\x00" + model + b"\x00" + c32,
        "norm_table": b"\x06" + c32,
        "sequence": b"\x04" + c32,
        "chat_template": b"\x00\x00" + model + b"\x00" + b"\x00\x00\x00\x00" + c32,
    }[place]
    with deadline(1.0), pytest.raises(MtokFormatError):
        mtokspec.parse(HEADER + body + b"\x00" * 64)


def test_deep_nesting_is_refused():
    for tag in (b"\x04", ):  # Sequence normalizer
        data = HEADER + (tag + b"\x01\x00\x00\x00") * 100_000 + b"\x00"
        with deadline(1.0), pytest.raises(MtokFormatError, match="nested deeper"):
            mtokspec.parse(data)
        with pytest.raises(ReferenceError, match="nested deeper"):
            reference_parse(data)
    pre = HEADER + b"\x00" + b"\x06\x01\x00\x00\x00" * 100_000
    with deadline(1.0), pytest.raises(MtokFormatError, match="PreTokenizer nested deeper"):
        mtokspec.parse(pre)


def test_unknown_tags_trailing_bytes_and_bad_utf8():
    base = mtokspec.build(t.MtokFile(chat_template="", eos_token="", flags=0, bos_token="",
                                     post_processor=t.PostProcessorProgram([])))
    i = len(HEADER)
    with pytest.raises(MtokFormatError, match="unknown Normalizer tag 9") as info:
        mtokspec.parse(base[:i] + b"\x09" + base[i + 1:])
    assert info.value.offset == i and info.value.path == "normalizer"
    with pytest.raises(MtokFormatError, match="extension.magic: truncated"):
        mtokspec.parse(base + b"\x00")
    extended = mtokspec.build(t.MtokFile(chat_template="", eos_token="", flags=0, bos_token="",
                                         post_processor=t.PostProcessorProgram([t.SequenceOp()]),
                                         extension=t.Extension(int(t.ExtensionMagic.MNX1), [])))
    with pytest.raises(MtokFormatError, match="trailing bytes"):
        mtokspec.parse(extended + b"\x00")
    other = mtokspec.parse(extended[:-6] + b"MNX2" + extended[-2:])  # read as it is; validate says a reader ignores it
    assert [(f.path, f.code) for f in mtokspec.validate(other) if f.code == "extension-magic"] == [
        ("extension.magic", "extension-magic")]
    bad = mtokspec.build(t.MtokFile(chat_template="ab"))
    with pytest.raises(MtokFormatError, match="invalid UTF-8") as info:
        mtokspec.parse(bad[:-2] + b"\xffb")
    assert info.value.path == "chat_template"
    with pytest.raises(MtokFormatError, match="flag must be 0 or 1"):
        mtokspec.parse(HEADER + b"\x00\x01\x02")


def test_parse_refuses_non_bytes():
    with pytest.raises(MtokFormatError):
        mtokspec.parse("430 4\n")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "tree, path",
    [
        (t.MtokFile(model=t.BPEModel(vocab=[("a", 0)])), "model.vocab[0].token"),
        (t.MtokFile(model=t.BPEModel(vocab=[(b"a", -1)])), "model.vocab[0].id"),
        (t.MtokFile(model=t.BPEModel(merges=[(1, 2)])), "model.merges[0]"),
        (t.MtokFile(model=t.BPEModel(vocab=[(b"x" * 70000, 0)])), "model.vocab[0].token"),
        (t.MtokFile(normalizer=t.SequenceNormalizer([t.NoPreTokenizer()])), "normalizer.normalizers[0]"),
        (t.MtokFile(added_tokens=[t.AddedToken(content=b"x")]), "added_tokens[0].content"),
        (t.MtokFile(eos_token="x"), "eos_token"),
        (t.MtokFile(normalizer=t.BertNFDNormalizer(strip_accents=True)), "normalizer.nfd_table"),
        (t.MtokFile(chat_template="", post_processor=t.LegacyPostProcessor([])), "post_processor"),
        (t.MtokFile(header=t.Header(special=[True])), "header.special"),
    ],
)
def test_build_errors_name_the_field(tree, path):
    with pytest.raises(MtokFormatError) as info:
        mtokspec.build(tree)
    assert info.value.path == path
    assert info.value.offset is None


def test_lazy_tables_behave_like_lists(corpus):
    data = (corpus / "tok" / "roberta-base" / "mnn.mtok").read_bytes()
    tree = mtokspec.parse(data)
    vocab = tree.model.vocab
    assert len(vocab) == 50265 and "not decoded" in repr(vocab)
    assert vocab == list(vocab) and vocab[0] == list(vocab)[0]
    assert mtokspec.parse(data).model.vocab == vocab  # raw comparison, no decoding
    old = vocab[5]
    vocab[5] = (old[0] + b"!", old[1])
    changed = mtokspec.build(tree)
    assert changed != data and len(changed) == len(data) + 1
    assert mtokspec.parse(changed).model.vocab[5] == (old[0] + b"!", old[1])
    vocab[5] = old
    assert mtokspec.build(tree) == data
    merges = tree.model.merges
    merges.append(merges[-1])
    with pytest.raises(TypeError):
        hash(merges)
    assert mtokspec.parse(mtokspec.build(tree)).model.merges == merges


def test_table_columns_match_rows(corpus):
    from mtokspec.format.table import Table

    for name in ("roberta-base", "t5-small"):
        tree = mtokspec.parse((corpus / "tok" / name / "mnn.mtok").read_bytes())
        tables = [tree.model.vocab, getattr(tree.model, "merges", None), getattr(tree.normalizer, "table", None)]
        for table in filter(None, tables):
            cols = table.columns()  # straight from the raw bytes
            assert "not decoded" in repr(table)
            # the same table without the lengths the parse recorded: the decoders walk again
            twin = Table.lazy(table.raw_bytes(), len(table), table._decode, table._columns, table._width)
            assert twin.columns() == cols
            assert list(zip(*cols)) == list(table) and table.columns() == cols
    assert t.BPEModel().vocab == [] and mtokspec.parse(mtokspec.build(t.MtokFile())).model.vocab.columns() == ((), ())


def test_table_packed_pair_columns(corpus, monkeypatch):
    """``columns(pack=True)``: the merge pair as one int, the same from the raw bytes (memoryview on
    little-endian machines, struct elsewhere) and from decoded rows; refused for other tables."""
    from mtokspec._generated import codec
    from mtokspec.format.table import Table

    tree = mtokspec.parse((corpus / "tok" / "roberta-base" / "mnn.mtok").read_bytes())
    merges = tree.model.merges
    lefts, rights, ranks = merges.columns()
    want = [[a | b << 32 for a, b in zip(lefts, rights)], list(ranks)]
    assert [list(c) for c in merges.columns(pack=True)] == want
    monkeypatch.setattr(codec, "LITTLE", not codec.LITTLE)
    assert [list(c) for c in merges.columns(pack=True)] == want
    for n in range(6):  # odd and even row counts, both alignments of the u64 reads
        rows = merges[:n] if n else []
        raw = mtokspec.parse(mtokspec.build(t.MtokFile(model=t.BPEModel(merges=rows)))).model.merges
        assert [list(c) for c in raw.columns(pack=True)] == [[a | b << 32 for a, b, _ in rows], [k for *_, k in rows]]
    monkeypatch.undo()
    assert [list(c) for c in Table(list(merges)).columns(pack=True)] == want
    with pytest.raises(ValueError):
        tree.model.vocab.columns(pack=True)
    with pytest.raises(ValueError):
        Table([(b"a", 1)]).columns(pack=True)


# Lengths around the limits of the fast table walk (walk8 steps on the low length byte: it reads a
# row of 0, 250-255 or 256k bytes exactly on the way, and a row of 256 + k bytes sends the table to
# the exact walk), and of the two-digit row formats (strings under 100 bytes).
_EDGE_LENGTHS = st.sampled_from([0, 1, 5, 10, 57, 99, 100, 101, 241, 242, 243, 249, 250, 251, 255, 256, 257, 262, 300, 512, 1030])


@st.composite
def _edge_strings(draw, n):
    """n strings of edge lengths: random bytes, or one byte repeated (zeros among them)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    return [rng.randbytes(length) if draw(st.booleans()) else bytes([draw(st.sampled_from([0, 1, 255]))]) * length
            for length in draw(st.lists(_EDGE_LENGTHS, min_size=n, max_size=n))]


@st.composite
def _files_with_edge_rows(draw):
    n = draw(st.integers(0, 40))  # past 16: the walk's unrolled blocks, and its tail
    tokens = draw(_edge_strings(n))
    ids = draw(st.permutations(range(n)))
    model = draw(st.sampled_from(["bpe", "wordpiece", "unigram"]))
    if model == "bpe":
        m = t.BPEModel(vocab=list(zip(tokens, ids)))
    elif model == "wordpiece":
        m = t.WordPieceModel(vocab=list(zip(tokens, ids)))
    else:
        m = t.UnigramModel(vocab=[(a, b, -1.5 * b) for a, b in zip(tokens, ids)])
    table = [(i, s) for i, s in enumerate(draw(_edge_strings(draw(st.integers(0, 6)))))]
    added = [t.AddedToken(id=1000 + i, content="x" * len(s)) for i, s in enumerate(draw(_edge_strings(draw(st.integers(0, 6)))))]
    return t.MtokFile(normalizer=t.TableNormalizer(table=table), model=m, added_tokens=added)


def _parse_outcome(data):
    """What parse makes of ``data``: the decoded tree, or the error with where it points."""
    try:
        return "ok", mtokspec.to_dict(mtokspec.parse(data))
    except MtokFormatError as e:
        return "error", e.offset, e.path, str(e)


@settings(max_examples=150, deadline=None)
@given(_files_with_edge_rows(), st.lists(st.tuples(st.integers(0, 2**31), st.integers(0, 255)), max_size=2))
def test_fast_table_walk_agrees_with_the_exact_walk(tree, flips):
    """The parse's fast table path (low length bytes, lengths checked in the unpack) gives the same
    tree or the same error as the exact walk alone, on files with strings of every length class
    and with bytes flipped (high length bytes among them)."""
    from unittest import mock

    from mtokspec._generated import codec

    data = bytearray(mtokspec.build(tree))
    for where, value in flips:
        data[where % len(data)] = value
    data = bytes(data)
    fast = _parse_outcome(data)
    with mock.patch.object(codec, "walk8", lambda *args: None):
        exact = _parse_outcome(data)
    assert fast == exact
    if not flips:
        assert fast[0] == "ok" and mtokspec.build(mtokspec.parse(data)) == data


def test_fast_table_walk_takes_short_rows_and_leaves_long_ones(corpus, runtime_path):
    """Real vocabularies take the fast path (columns kept from the parse), roberta's 256-byte token
    among them; so do empty strings and strings of 250-255 or 512 bytes (read exactly on the way).
    A string of 256 + k bytes (0 < k < 250) is misread by the pure fast walk, found by the unpack's
    length check, and the table is walked exactly and decoded on first use; so is a table with
    more than 256 rows the fast walk must read exactly.  The compiled walk reads every length
    exactly, so it takes them all, keeping the strings' places (``string_index``) instead of the
    strings themselves."""
    pure = runtime_path == "pure"

    def walked_fast(table):
        assert (table._packed is None) == pure  # the compiled walk keeps places, not columns
        return (table._cols if pure else table._packed) is not None

    for name in ("whisper.tiny", "roberta-base"):
        tree = mtokspec.parse((corpus / "tok" / name / "mnn.mtok").read_bytes())
        assert walked_fast(tree.model.vocab) and "not decoded" in repr(tree.model.vocab)
    for length in (0, 249, 250, 256, 300, 512):
        vocab = [(b"a", 0), (b"b" * length, 1), (b"c", 2)]
        parsed = mtokspec.parse(mtokspec.build(t.MtokFile(model=t.BPEModel(vocab=vocab)))).model.vocab
        assert (parsed._cols is None and parsed._packed is None) == (pure and length == 300)
        assert parsed.columns() == ((b"a", b"b" * length, b"c"), (0, 1, 2)) and parsed == vocab
    for count, fast in ((256, True), (257, not pure)):
        vocab = [(b"", i) for i in range(count)] + [(b"z", count)]
        parsed = mtokspec.parse(mtokspec.build(t.MtokFile(model=t.BPEModel(vocab=vocab)))).model.vocab
        assert (parsed._cols is not None or parsed._packed is not None) == fast and parsed == vocab


def test_tables_walked_compiled_decode_without_the_module(corpus, monkeypatch):
    """A table the compiled walk kept as its strings' places decodes the same when the compiled
    module is turned off before it is first read (the pure decode of its bytes)."""
    from mtokspec import speedups

    if speedups.module() is None:
        pytest.skip("the compiled module is not built here (or MTOKSPEC_PURE is set)")
    data = (corpus / "tok" / "t5-small" / "mnn.mtok").read_bytes()
    want = mtokspec.parse(data).model.vocab.columns()
    kept = mtokspec.parse(data)
    assert kept.model.vocab.string_index() is not None and kept.normalizer is not None
    monkeypatch.setattr(speedups, "_module", None)
    assert kept.model.vocab.columns() == want
    assert list(kept.model.vocab) == list(zip(*want))
