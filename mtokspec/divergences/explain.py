"""Which divergence rules explain a case where the ``hf`` and ``mnn`` semantics disagree.

The two runs are compared stage by stage, and the first stage whose outputs differ names the rules:

- encode: the post-processor (same ids in, different ids out), the special/added-token split, then
  for each piece the normalizer, the pre-tokenizer and the model -- each stage fed the same input
  on both sides, so a difference is that stage's own;
- decode: special ids skipped, the decoder chain, the clean-ups after it, bytes that are not UTF-8;
  the engine's streaming decode is its own per-id decoder;
- a legacy ``tokenizer.txt``: the whole algorithm is MNN's own, one rule per type.

A stage that differs without any of its rules applying is reported as unexplained (an empty
list): that is a gap in the registry, or in the model of MNN.
"""

from __future__ import annotations

from mtokspec.divergences.rule import Rule
from mtokspec.divergences.rules import decoders as D
from mtokspec.divergences.rules import header as H
from mtokspec.divergences.rules import legacy, models, normalizers, pre_tokenizers
from mtokspec.format import tree as t
from mtokspec.runtime.mnn.pipeline import PipelineTokenizer
from mtokspec.runtime.mnn.tokenizer import MnnTokenizer, to_bytes

__all__ = ["explain_encode", "explain_decode"]


def _at(rules: tuple[Rule, ...], tree, text: bytes | None = None) -> list[str]:
    """The codes of the rules that can explain a difference at their stage for this file (and,
    given, this stage input)."""
    if text is None:
        return [r.code for r in rules if r.explains(tree)]
    return [r.code for r in rules if r.explains_case(tree, text)]


def explain_encode(hf, mnn: MnnTokenizer, text: str, add_special_tokens: bool = True) -> list[str]:
    """The rules that explain ``hf.encode(text, add_special_tokens)`` against
    ``mnn.encode(text, add_special_tokens)``: ``[]`` when they agree *or* when nothing explains
    the difference (call it only on differing cases)."""
    tree = mnn.tree
    if isinstance(tree, t.LEGACY_ROOTS):
        return _at(legacy.RULES, tree)
    assert isinstance(mnn, PipelineTokenizer)
    rules: list[str] = []
    raw_m = mnn.encode(text, add_special_tokens=False)
    raw_h = hf.encode(text, add_special_tokens=False)
    if add_special_tokens and hf.add_special(raw_m) != mnn.add_special(mnn.prefix_ids + raw_m):
        rules += _at((H.POST_MISREAD, H.BOS_TWICE), tree)
    if raw_h == raw_m:
        return rules
    if not raw_h and H.POST_NO_SEQUENCE.explains(tree):
        return rules + [H.POST_NO_SEQUENCE.code]
    b = to_bytes(text)
    units_m: list[tuple[bytes, int | None]] = []
    for piece, sid in mnn.split_specials(b):
        units_m += [(piece, sid)] if sid is not None else mnn.added_split(piece)
    units_h = [(s.encode("utf-8", "surrogatepass"), i) for s, i in hf.added.split(text)]
    if units_m != units_h:
        special_texts = [s for s, _ in mnn._specials()]
        if any(s in b for s in special_texts):
            rules.append(H.SPECIAL_SPLIT.code)
        if any((a[2] or a[3]) and a[1] in b for a in mnn.added):
            rules.append(H.ADDED_STRIP_ASCII.code)
        return rules
    stage_rules: list[str] = []
    for piece, tid in units_m:
        if tid is not None:
            continue
        s = piece.decode("utf-8", "surrogateescape")
        norm_h = hf._normalize(s) if hf._normalize is not None else s
        norm_m = mnn.normalize(piece)
        if norm_h.encode("utf-8", "surrogatepass") != norm_m:
            stage_rules += _at(normalizers.RULES, tree, piece)
            continue
        if not norm_m:
            continue
        splits_h = [p.encode("utf-8", "surrogatepass") for p in hf.pre_tokenizer.split(norm_h)]
        splits_m = [p for p in mnn.pre_tokenize(norm_m) if p]
        ids_h: list[int] = []
        hf._encode_segment(norm_h, ids_h)
        if splits_h != splits_m:
            # the pre-tokenizers cut differently; that explains the case only if HF's model gives
            # other ids on MNN's pieces (else the model stage, fed those pieces on both sides, does)
            on_mnn_pieces = _hf_model_ids(hf, splits_m)
            if on_mnn_pieces is None or on_mnn_pieces != ids_h:
                stage_rules += _at(pre_tokenizers.RULES, tree, norm_m)
                continue
            ids_h = on_mnn_pieces
        ids_m: list[int] = []
        for sp in splits_m:
            ids_m += mnn.model.tokenize(sp)
        if ids_h != ids_m:
            stage_rules += _at(models.RULES, tree, norm_m)
    return rules + sorted(set(stage_rules))


def _hf_model_ids(hf, pieces: list[bytes]) -> list[int] | None:
    """HF's model run on ``pieces`` (MNN's pre-tokenizer's), or None where HF's plan does not feed
    its model the pre-tokenizer's pieces as they are (byte-level and whole-text BPE)."""
    model = hf.model
    if hf._plan in ("bytelevel", "text") or getattr(model, "map_bytes", False):
        return None
    ids: list[int] = []
    for p in pieces:
        try:
            ids += model.tokenize(p.decode("utf-8"))
        except UnicodeDecodeError:
            return None
    return ids


def _valid_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def explain_decode(hf, mnn: MnnTokenizer, ids: list[int], stream: bool = False) -> list[str]:
    """The rules that explain ``hf.decode(ids)`` against ``mnn.decode_bytes(ids, stream)``."""
    tree = mnn.tree
    if isinstance(tree, t.LEGACY_ROOTS):
        return _at(legacy.RULES, tree)
    assert isinstance(mnn, PipelineTokenizer)
    rules: list[str] = []
    got = mnn.decode_bytes(ids, stream=stream)
    if not _valid_utf8(got):
        rules.append(D.DECODE_RAW_BYTES.code)
    if any(not 0 <= i < mnn.vocab_size for i in ids) and not isinstance(tree.model, t.BPEModel):
        rules.append(D.UNK_DECODE.code)
    if stream:
        if got != mnn.decode_bytes(ids):
            return rules + [D.STREAM_DECODE.code]
        # the engine printed what the sequence decode gives: the sequence decode's rules explain it
        return list(dict.fromkeys(rules + explain_decode(hf, mnn, ids, stream=False)))
    kept = [i for i in ids if not mnn.is_special(i)]
    if len(kept) != len(ids) and hf.decode(kept) != hf.decode(ids):
        rules.append(D.DECODE_SKIPS_SPECIAL.code)
    tokens = [mnn.model.id_to_token(i) for i in kept]
    chained = b"".join(mnn.decoder.decode_chain(tokens))
    want = hf.decode(kept).encode("utf-8", "surrogatepass")
    # the chain differs, and the clean-ups MNN applies after it do not make up for it (HF's WordPiece
    # clean-up, token by token, removes the space before . ? ! , as MNN's does after the chain)
    if want != chained and want != mnn._decode_seq(kept) and _valid_utf8(chained):
        rules.append(D.DECODER_CHAIN.code)
    if mnn.wordpiece_decode and mnn._decode_seq(kept) != chained:
        rules.append(D.WORDPIECE_CLEANUP.code)
    if mnn.clean_up_spaces and not mnn.wordpiece_decode and mnn._decode_seq(kept) != chained:
        rules.append(D.CLEAN_UP_SPACES.code)
    return rules
