"""The bytes ``--target mnn`` chooses: for each lever of the format, the value for which MNN's C++
runtime gives the answer HF ``tokenizers`` gives on the folder's ``tokenizer.json``.

Each function takes the exporter's tree (what ``from_hf`` builds) and the folder's parsed
``tokenizer.json``, and returns the tree with one lever set; :func:`retarget` applies them all.

- post-processor: HF's single-sequence template (``TemplateProcessing``, ``RobertaProcessing``,
  ``BertProcessing``, ``ByteLevel``, ``Sequence``) as a program, never in a layout MNN misreads
  (a program of one sequence op and three ids has exactly ``count x 4`` bytes after its count: an
  op inserting id ``0xFFFFFFFF``, which MNN skips as negative, is added); the prefix ids are empty,
  since MNN applies the program after them (BOS twice otherwise);
- header special ids: none (see :func:`without_specials`); a BPE or Unigram vocabulary gets the
  added tokens whose ids follow it, which MNN's decode looks up there (:func:`with_added_in_vocab`);
- normalizers, pre-tokenizers and decoders: each HF component as the row of :mod:`.variants` for
  its type and options writes it (the exporter's node where the row writes nothing); a Sequence
  is decided child by child;
- Unigram scores as HF's JSON reader reads them (:func:`serde_scores`);
- a BERT WordPiece vocabulary whose tokens HF's clean-up joins to the one before (``. , ? !``)
  print without a space on MNN too, token by token (:func:`~.rows.joined_wordpiece_tokens`);
- BPE's unknown token (without byte fallback or fuse_unk) as ``<0xHH>`` rows of its id, one per
  byte that begins a character (:func:`~.rows.bpe_unknown_rows`); BPE's continuing-subword prefix
  as a mark before each word and renamed tokens (:func:`~.rows.bpe_continuing_prefix`);
- decoder: no decoder (HF joins the tokens with spaces) as a WordPiece decoder whose prefix no
  token starts with; a Regex Replace decoder (written with an empty pattern, on which MNN's decode
  never returns) as its text when it is a plain string, else left out; the clean-up flag off, as HF ``tokenizers`` decodes (it never applies
  ``clean_up_tokenization_spaces``; its WordPiece ``cleanup`` works token by token, so of its
  replacements only the space before ``. ? ! ,`` ever applies, which MNN's WordPiece decode removes
  whatever the flag says).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mtokspec.convert.inputs import SEQ_A as _SEQ_A
from mtokspec.format import tree as t
from mtokspec.convert.mnn_target.rows import bpe_continuing_prefix, bpe_unknown_rows, joined_wordpiece_tokens

NOOP_ID = 0xFFFFFFFF
"""A program op inserting this id inserts nothing on MNN (read as -1, skipped as negative)."""




def misread_by_mnn(ops: list[t.PostOp]) -> bool:
    """Whether MNN's loader reads this program otherwise than written (the older ids-only layout)."""
    from mtokspec.runtime.mnn.tokenizer import post_program_ops, written_ops

    pp = t.PostProcessorProgram(list(ops))
    return bool(ops) and post_program_ops(pp) != written_ops(pp)


def program(template: list) -> list[t.PostOp]:
    """HF's template (ids and ``"A"``) as ops MNN reads as written."""
    if template == [_SEQ_A]:
        return []
    ops: list[t.PostOp] = [t.SequenceOp() if x == _SEQ_A else t.SpecialTokenOp(int(x)) for x in template]
    if misread_by_mnn(ops):
        ops.append(t.SpecialTokenOp(NOOP_ID))
    return ops


def with_program(tree: t.MtokFile, template: list | None) -> t.MtokFile:
    """The post-processor and prefix lever (``template`` None: HF's is not modelled, keep the tree's)."""
    if template is None:
        return tree
    h = tree.header
    return replace(tree, header=t.make_header(h.special, h.stop, []),
                   post_processor=t.PostProcessorProgram(program(template)))


def without_specials(tree: t.MtokFile) -> t.MtokFile:
    """No header special ids: MNN's ``decode(ids)`` skips them where HF's ``decode`` keeps them
    (``skip_special_tokens=False``, transformers' default too), and its split at their decoded
    texts is not needed -- MNN's added-token split finds every added token, special or not, as HF
    does (earliest, then longest, with lstrip/rstrip) -- and it cuts where HF does not (an id that
    is not an added token, one that strips).  MNN reads the list nowhere else."""
    h = tree.header
    return replace(tree, header=t.make_header([], h.stop, h.prefix))


UNREACHABLE_SCORE = -1e9
"""The Unigram score of an added token's vocabulary row: no segmentation ever takes the piece."""


def with_added_in_vocab(tree: t.MtokFile) -> t.MtokFile:
    """A BPE or Unigram vocabulary with rows for the added tokens whose ids follow it, so that
    MNN's ``decode``, which looks ids up in the model's vocabulary only, gives their text as HF
    does (nllb's language codes: HF "ace_Arab", MNN "<unk>" without the row).

    Encoding cannot reach a row: the added-token split takes their text first; a BPE merge gives
    a token only when its two parts join to it and a single character is an initial symbol (such
    contents are left out); a Unigram piece scored :data:`UNREACHABLE_SCORE` loses to any other
    segmentation, and one exists wherever the content's last character is itself a piece (others
    are left out).  Rows stay a dense id range (MNN's loader writes ``id_to_token[id]`` into a
    table of the row count): the run stops at the first id that gets no row."""
    m = tree.model
    if not isinstance(m, (t.BPEModel, t.UnigramModel)):
        return tree
    ids = {row[1] for row in m.vocab}
    if ids != set(range(len(m.vocab))):
        return tree
    by_id: dict[int, bytes] = {row[1]: row[0] for row in m.vocab}
    pieces = frozenset(by_id.values())
    tokens = set(pieces)
    if isinstance(m, t.BPEModel):
        made = {by_id.get(a, b"") + by_id.get(b, b"") for a, b, _ in m.merges}

        def fits(raw: bytes) -> bool:
            return len(raw.decode("utf-8", "replace")) > 1 and raw not in made
    else:
        def fits(raw: bytes) -> bool:
            last = raw.decode("utf-8", "surrogatepass")[-1:].encode("utf-8", "surrogatepass")
            return last in pieces
    content = {a.id: a.content.encode("utf-8", "surrogatepass") for a in tree.added_tokens}
    rows: list[Any] = []
    at = len(m.vocab)
    while at in content and content[at] and content[at] not in tokens and fits(content[at]):
        raw = content[at]
        rows.append((raw, at) if isinstance(m, t.BPEModel) else (raw, at, UNREACHABLE_SCORE))
        tokens.add(raw)
        at += 1
    if not rows:
        return tree
    return replace(tree, model=replace(m, vocab=sorted([*m.vocab, *rows])))


def _lowered(stage: str, node: Any, hf: Any, ctx: Any, children: str) -> Any:
    """``node`` (the exporter's, of ``stage``) as ``--target mnn`` writes it for the HF node ``hf``:
    the row of :mod:`.variants` decides; a Sequence is decided child by child."""
    from mtokspec.convert.mnn_target import variants

    if isinstance(hf, dict) and hf.get("type") == "Sequence" and isinstance(node, _SEQUENCES[stage]):
        kids = hf.get(children) or []
        have = getattr(node, _SEQUENCE_FIELD[stage])
        if isinstance(kids, list) and len(kids) == len(have):
            return type(node)([_lowered(stage, n, c, ctx, children) for n, c in zip(have, kids)])
        return node
    return variants.lower(stage, hf, node, ctx)


_SEQUENCES = {"normalizer": t.SequenceNormalizer, "pre_tokenizer": t.SequencePreTokenizer,
              "decoder": t.SequenceDecoder}
_SEQUENCE_FIELD = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "decoder": "decoders"}


def pre_tokenizer(node: t.PreTokenizer, pt: Any, ctx: Any = None) -> t.PreTokenizer:
    """``node`` (the exporter's) with every HF pre-tokenizer of ``pt`` as its :mod:`.variants` row writes it."""
    return _lowered("pre_tokenizer", node, pt, ctx, "pretokenizers")


def normalizer(node: t.Normalizer, norm: Any, ctx: Any = None) -> t.Normalizer:
    """``node`` (the exporter's) with every HF normalizer of ``norm`` as its :mod:`.variants` row writes it."""
    return _lowered("normalizer", node, norm, ctx, "normalizers")


def _unused_prefix(tree: t.MtokFile) -> str:
    """A WordPiece prefix no vocabulary token starts with (so every token after the first gets a
    space, as HF's join without a decoder)."""
    vocab = tree.model.vocab
    for cand in ("##", "\x01", "\x01\x02", "\x01\x02\x03"):
        b = cand.encode()
        if not any(row[0].startswith(b) for row in vocab):
            return cand
    raise AssertionError("no unused WordPiece prefix")  # pragma: no cover - 3 control bytes in every token


def _defined_decoder(node: t.Decoder, dec: Any) -> t.Decoder | None:
    """``node`` without what MNN never returns from: a Replace decoder with an empty pattern (the
    exporter writes a Regex pattern so) becomes its text when the regex is a literal (its
    :mod:`.variants` row), else goes (None)."""
    if isinstance(node, t.SequenceDecoder) and isinstance(dec, dict) and dec.get("type") == "Sequence":
        children = dec.get("decoders") or []
        if len(children) == len(node.decoders):
            kept = [_defined_decoder(n, c) for n, c in zip(node.decoders, children)]
            return t.SequenceDecoder([n for n in kept if n is not None])
        return node
    node = _lowered("decoder", node, dec, None, "decoders")
    if isinstance(node, t.ReplaceDecoder) and not node.pattern:
        return None
    return node


def decoder(tree: t.MtokFile, tj: dict) -> t.MtokFile:
    """The decoder chain and clean-up flag HF ``tokenizers``' ``decode`` needs."""
    dec = tj.get("decoder")
    flags = (tree.flags or 0) & ~t.MtokFlags.clean_up_tokenization_spaces
    node = _defined_decoder(tree.decoder, dec) or t.SequenceDecoder([])
    if dec is None:
        node = t.WordPieceDecoder(_unused_prefix(tree), False)
    return replace(tree, decoder=node, flags=int(flags) if tree.flags is not None else None)


UNK_PENALTY = 10.0
"""HF's Unigram scores a character no piece covers ``min_score - UNK_PENALTY`` (``K_UNK_PENALTY``)."""


def serde_scores(tree: t.MtokFile) -> t.MtokFile:
    """Unigram scores as HF reads them from ``tokenizer.json`` (serde_json's parse, which is not
    correctly rounded), so that MNN's lattice meets the exact ties HF meets; with byte fallback,
    the ``<0xHH>`` pieces at HF's unknown score (the lowest score less :data:`UNK_PENALTY`): MNN's
    lattice tries a byte piece at every one-byte step, HF an unknown node for a character no piece
    covers (its bytes written after), so MNN takes them where HF does, and a one-byte character's
    path sums to HF's exactly (a far lower score would round the sums after it: ties HF meets
    would not be ties there)."""
    from mtokspec.runtime.hf.models.unigram import serde_f64
    from mtokspec.runtime.mnn._text import BYTE_PIECES

    m = tree.model
    if not isinstance(m, t.UnigramModel):
        return tree
    scores = [serde_f64(s) for _, _, s in m.vocab]
    if not m.byte_fallback or not scores:
        return replace(tree, model=replace(m, vocab=[(p, i, s) for (p, i, _), s in zip(m.vocab, scores)]))
    unknown = min(scores) - UNK_PENALTY
    byte_pieces = frozenset(BYTE_PIECES)
    return replace(tree, model=replace(m, vocab=[(p, i, unknown if p in byte_pieces else s)
                                                 for (p, i, _), s in zip(m.vocab, scores)]))


def _leaves(node: t.Normalizer) -> list[t.Normalizer]:
    if isinstance(node, t.SequenceNormalizer):
        return [leaf for c in node.normalizers for leaf in _leaves(c)]
    return [node]


def _keeps_ends(node: t.Normalizer) -> bool:
    """A written normalizer after which stripping the ends gives what stripping before it gives
    (as far as per-code-point tables go): a literal Replace of white space by white space (or by
    nothing), of one character by one, or of text without white space by such text (not empty: a
    text's white space ends stay where they were), a table, a lower-casing."""
    from mtokspec.runtime.hf.normalizers import WHITESPACE_STR

    if isinstance(node, t.ReplaceNormalizer):
        if len(node.pattern) == 1 and len(node.content) == 1:
            return True  # a per-code-point map, as a table (the stand-ins of a protected table)
        if node.content and not any(c in WHITESPACE_STR for c in node.pattern + node.content):
            return True  # the base + mark pairs a SentencePiece map composes
        return node.pattern.isspace() and (node.content.isspace() or not node.content)
    if isinstance(node, t.BertNormalizer):
        return not (node.clean_text or node.handle_chinese_chars or node.strip_accents)
    return isinstance(node, (t.TableNormalizer, t.NoNormalizer))


def strip_split(tree: t.MtokFile) -> t.MtokFile:
    """HF's ``Strip`` normalizer where MNN's strips ASCII and Zs white space only, and nothing at all
    on the right: when only normalizers that keep a text's ends follow it (:func:`_keeps_ends`), the
    white space at the ends is removed at the start of the pre-tokenizer instead, by a Split
    (Removed) of ``^[White_Space]+`` / ``[White_Space]+$`` that MNN runs with ``std::wregex``
    (exact up to a run of 26,000 characters, and where no table maps other characters at the ends
    to white space)."""
    from mtokspec.convert.mnn_target.variants.pre_tokenizers import LEADING_WHITE_SPACE, TRAILING_WHITE_SPACE

    leaves = _leaves(tree.normalizer)
    at = [k for k, n in enumerate(leaves) if isinstance(n, t.StripNormalizer)]
    if not at or not all(_keeps_ends(n) for n in leaves[at[-1] + 1:]):
        return tree
    node = leaves[at[-1]]
    ends = [p for p, on in ((LEADING_WHITE_SPACE, node.strip_left), (TRAILING_WHITE_SPACE, node.strip_right)) if on]
    if not ends:
        return tree
    split = t.SplitPreTokenizer("|".join(ends), False, int(t.SplitBehavior.Removed))
    pre = tree.pre_tokenizer
    if isinstance(pre, t.NoPreTokenizer):
        new: t.PreTokenizer = split
    elif isinstance(pre, t.SequencePreTokenizer):
        new = t.SequencePreTokenizer([split, *pre.pretokenizers])
    else:
        new = t.SequencePreTokenizer([split, pre])
    return replace(tree, pre_tokenizer=new)


def retarget(tree: t.MtokFile, tj: dict, template: list | None) -> t.MtokFile:
    """The exporter's tree with every lever set for MNN's runtime."""
    from mtokspec.convert.mnn_target.variants import Context

    ctx = Context(tj, tree)
    tree = replace(tree, normalizer=normalizer(tree.normalizer, tj.get("normalizer"), ctx),
                   pre_tokenizer=pre_tokenizer(tree.pre_tokenizer, tj.get("pre_tokenizer"), ctx))
    tree = strip_split(tree)
    tree = joined_wordpiece_tokens(serde_scores(decoder(tree, tj)), tj)
    tree = with_program(tree, template)
    return bpe_unknown_rows(bpe_continuing_prefix(with_added_in_vocab(without_specials(tree)), tj), tj)
