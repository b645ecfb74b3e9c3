"""A ``.mtok`` file run as MNN's C++ ``PipelineTokenizer`` runs it.

Added tokens are found in the raw text (earliest, then longest; ``lstrip``/``rstrip`` eat ASCII
white space only) before the normalizer; each piece between them is normalized, pre-tokenized and
given to the model split by split.  ``decode(ids)`` skips the header's special ids, runs the
decoder chain, then removes the space before ``. ? ! ,`` under a WordPiece decoder and applies
``clean_up_tokenization_spaces`` when the file's flag says so.  The per-id decode (what the engine
prints) reads ``▁`` as a space and ``<0xHH>`` as a byte anywhere in a token, puts a space before
every WordPiece token that is not a continuation, and maps byte-level characters back.
"""

from __future__ import annotations

import re
from typing import Any

from mtokspec.errors import UndefinedInMnn
from mtokspec.format import tree as t
from mtokspec.args import token_id, token_text
from mtokspec.runtime.shared.bounds import budget, regex_steps, running_budget
from mtokspec.runtime.mnn import decoders, models, normalizers, pre_tokenizers
from mtokspec.runtime.mnn._compiled import stages
from mtokspec.runtime.mnn._text import META, i32, utf8
from mtokspec.runtime.mnn.decoders import byte_level_unmap, scan_hex_byte
from mtokspec.runtime.mnn.tokenizer import MnnTokenizer, post_program_ops, to_bytes

_SPACE = frozenset(b" \t\n\v\f\r")
# the compiled searches of added-token contents, shared by tokenizers of one process (compiling an
# alternation of a thousand contents takes a good part of a second, as a file is loaded again and again)
_ADDED_SEARCHES: dict[bytes, Any] = {}
_WORDPIECE_CLEANUP = ((b" .", b"."), (b" ?", b"?"), (b" !", b"!"), (b" ,", b","))
_CLEANUP = ((b" ' ", b"'"), (b" n't", b"n't"), (b" 'm", b"'m"), (b" 's", b"'s"), (b" 've", b"'ve"),
            (b" 're", b"'re"))


def _first_of_each_content(added) -> dict[bytes, tuple]:
    """Content -> the first added token ``(id, content, lstrip, rstrip)`` with it (empty ones left out)."""
    first: dict[bytes, tuple] = {}
    for tok in added:
        if tok[1]:
            first.setdefault(tok[1], tok)
    return first


_NULL_NODES = (t.NoNormalizer, t.NoPreTokenizer)


class _NullChildCall:
    """A sequence stage holding a null child, in a version that calls it: every use is undefined."""

    def __init__(self, message: str):
        self.message = message

    def _call(self, _: Any) -> Any:
        raise UndefinedInMnn(self.message)

    normalize = pre_tokenize = _call


def _null_child_calls(stage: Any, node: Any, name: str, version: Any) -> Any:
    """``stage``, or a :class:`_NullChildCall` when ``node`` is a sequence holding a null child."""
    for child, path in t.walk_stage(node, name):
        if path != name and isinstance(child, _NULL_NODES):
            return _NullChildCall(f"{path}: a null child of a sequence, which MNN {version.name} calls "
                                  f"(a null-pointer call; later versions skip it)")
    return stage


class PipelineTokenizer(MnnTokenizer):
    """A ``.mtok`` file: MNN's pipeline of normalizer, pre-tokenizer, model and decoders."""

    tree_type = t.MtokFile

    def __init__(self, mtok: t.MtokFile, **kw):
        super().__init__(mtok, **kw)
        self.normalizer = normalizers.from_tree(mtok.normalizer)
        self.pre_tokenizer = pre_tokenizers.from_tree(mtok.pre_tokenizer)
        self.model = models.from_tree(mtok.model)
        self.decoder = decoders.from_tree(mtok.decoder)
        nodes = [node for node, _ in t.walk_stage(mtok.decoder)]
        # the loader sets these while it reads the decoders, whatever their place in a sequence
        self.byte_level = any(isinstance(d, t.ByteLevelDecoder) for d in nodes)
        wp = [d for d in nodes if isinstance(d, t.WordPieceDecoder)]
        self.wordpiece_decode = bool(wp)
        self.wordpiece_prefix = utf8(wp[-1].prefix) if wp else b""
        self.wordpiece_cleanup = True  # format next's DecodeCleanupField (mnn-next) may turn it off
        self.added = [(i32(a.id), utf8(a.content), a.lstrip, a.rstrip) for a in mtok.added_tokens]
        self.clean_up_spaces = bool((mtok.flags or 0) & t.MtokFlags.clean_up_tokenization_spaces)
        self.chat_template = mtok.chat_template or None
        self.eos_token = mtok.eos_token or None
        self.bos_token = mtok.bos_token or None
        self._post = post_program_ops(mtok.post_processor) if self.version.post_processor else []
        if not self.version.strip_normalizer:
            for node, path in t.walk_stage(mtok.normalizer, "normalizer"):
                if isinstance(node, t.StripNormalizer):
                    raise UndefinedInMnn(f"{path}: MNN {self.version.name}'s loader does not know normalizer type 8 "
                                         f"(Strip): it skips the type byte only and reads the rest of the file "
                                         f"out of place")
        if not self.version.skips_null_children:
            self.normalizer = _null_child_calls(self.normalizer, mtok.normalizer, "normalizer", self.version)
            self.pre_tokenizer = _null_child_calls(self.pre_tokenizer, mtok.pre_tokenizer, "pre_tokenizer",
                                                   self.version)
        self._added_search = None  # built at the first encode: _find_added
        self._added_by_content: dict[bytes, tuple] = {}
        # no normalizer and ByteLevel's compiled scan: encode counts the scan's steps itself, without
        # a budget object (the scan is the only stage that reads one; models never do), see encode
        self._scan_counted = getattr(self.pre_tokenizer, "scan_counted", None) if self.normalizer is None else None
        sp = stages()  # the compiled split (mnn_stages.c), or None: the loop of added_split
        self._added_compiled = None if sp is None else (
            sp.mnn_added_split, sp.mnn_added_matcher([(content, i, lstrip, rstrip) for i, content, lstrip, rstrip in
                                 _first_of_each_content(self.added).values()], bytes(sorted(_SPACE))))

    # --- encoding ---------------------------------------------------------------------------------
    def _find_added(self, text: bytes, start: int):
        """``multi_string_find``: the earliest match of an added token's content, the longest at a
        tie (the first listed among equals); ``(-1, None)`` when none.

        One search of an alternation of the contents, longest first: a leftmost match, and at its
        place the longest content that matches there (two contents of one length cannot both)."""
        search = self._added_search
        if search is None:
            first = _first_of_each_content(self.added)
            self._added_by_content = first
            alternation = b"|".join(re.escape(c) for c in sorted(first, key=len, reverse=True)) or b"(?!)"
            search = _ADDED_SEARCHES.get(alternation)
            if search is None:
                search = re.compile(alternation).search
                if len(_ADDED_SEARCHES) >= 64:
                    _ADDED_SEARCHES.clear()
                _ADDED_SEARCHES[alternation] = search
            self._added_search = search
        m = search(text, start)
        if m is None:
            return -1, None
        return m.start(), self._added_by_content[m.group()]

    def added_split(self, text: bytes) -> list[tuple[bytes, int | None]]:
        """``text`` cut at the added tokens: ``(piece, None)`` and ``(content, id)``."""
        if self._added_compiled is not None:
            run, matcher = self._added_compiled
            return run(text, matcher)
        units: list[tuple[bytes, int | None]] = []
        last, n = 0, len(text)
        while last < n:
            pos, tok = self._find_added(text, last) if self.added else (-1, None)
            if tok is None:
                units.append((text[last:], None))
                break
            _, content, lstrip, rstrip = tok
            end, nxt = pos, pos + len(content)
            if lstrip:
                while end > last and text[end - 1] in _SPACE:
                    end -= 1
            if rstrip:
                while nxt < n and text[nxt] in _SPACE:
                    nxt += 1
            if end > last:
                units.append((text[last:end], None))
            # the id of the first added token with this content (MNN looks it up again): tok itself
            units.append((content, tok[0]))
            last = nxt
        return units

    def encode(self, text: str | bytes, add_special_tokens: bool = True) -> list[int]:
        """MNN's ``encode(text)`` (see :meth:`MnnTokenizer.encode`).  With ByteLevel's compiled scan
        and no normalizer, outside another call: the same steps, in the same order, with the scan's
        step count kept here instead of in a budget object."""
        scan = self._scan_counted
        if scan is None or running_budget() is not None:
            return MnnTokenizer.encode(self, text, add_special_tokens)
        data = to_bytes(text)
        n = len(data)
        steps = regex_steps(n)
        tokenize_pieces, added_split = self.model.tokenize_pieces, self.added_split
        ids: list[int] = list(self.prefix_ids) if add_special_tokens else []
        for piece, sid in self.split_specials(data):
            if sid is not None:
                ids.append(sid)
                continue
            if not piece:
                continue
            for unit, tid in added_split(piece):
                if tid is not None:
                    ids.append(tid)
                elif unit:
                    pieces, steps = scan(unit, steps, n)
                    tokenize_pieces(pieces, ids)
        if add_special_tokens and self._post:
            with budget(n, self.max_expansion):
                return self.add_special(ids)
        return ids

    def normalize(self, text: bytes) -> bytes:
        return text if self.normalizer is None else self.normalizer.normalize(text)

    def pre_tokenize(self, text: bytes) -> list[bytes]:
        return [text] if self.pre_tokenizer is None else self.pre_tokenizer.pre_tokenize([text])

    def _encode_piece(self, text: bytes, ids: list[int]) -> None:
        if not text:
            return
        tokenize_pieces = self.model.tokenize_pieces
        normalizer, pre_tokenizer = self.normalizer, self.pre_tokenizer  # self.normalize, self.pre_tokenize
        for unit, tid in self.added_split(text):
            if tid is not None:
                ids.append(tid)
                continue
            if normalizer is not None:
                unit = normalizer.normalize(unit)
            if unit:
                tokenize_pieces([unit] if pre_tokenizer is None else pre_tokenizer.pre_tokenize([unit]), ids)

    # --- decoding ---------------------------------------------------------------------------------
    def _decode_seq(self, ids: list[int]) -> bytes:
        tokens = [self.model.id_to_token(i) for i in ids if i not in self._special_set]
        with budget(sum(map(len, tokens)), self.max_expansion):
            tokens = self.decoder.decode_chain(tokens)
        out = b"".join(tokens)
        if self.wordpiece_decode and self.wordpiece_cleanup:
            for a, b in _WORDPIECE_CLEANUP:
                out = out.replace(a, b)
        if self.clean_up_spaces:
            for a, b in _CLEANUP:
                out = out.replace(a, b)
        return out

    def tail_hold(self) -> int | None:
        """How many trailing bytes of the decode a later id can still change (None: all of them):
        a clean-up replacement's longest pattern, less one; all after a joining decoder stage
        (``Fuse``, ``WordPiece``) followed by one that replaces across tokens."""
        tree = self.tree
        assert isinstance(tree, t.MtokFile)
        joined = False
        for node, _ in t.walk_stage(tree.decoder):
            if isinstance(node, (t.FuseDecoder, t.WordPieceDecoder)):
                joined = True
            elif joined and (isinstance(node, t.ReplaceDecoder) and len(node.pattern.encode("utf-8", "surrogatepass")) > 1
                             or isinstance(node, t.StripDecoder) and node.start > 0
                             and len(node.content.encode("utf-8", "surrogatepass")) > 1
                             or isinstance(node, (t.MetaspaceDecoder, t.ByteFallbackDecoder))):
                return None
        patterns: list[bytes] = []
        if self.wordpiece_decode:
            patterns += [a for a, _ in _WORDPIECE_CLEANUP]
        if self.clean_up_spaces:
            patterns += [a for a, _ in _CLEANUP]
        return max((len(a) - 1 for a in patterns), default=0)

    def _decode_one(self, i: int) -> bytes:
        token = self.model.id_to_token(i)
        out = bytearray()
        pos, n = 0, len(token)
        while pos < n:
            if token[pos:pos + 3] == META:
                out += b" "
                pos += 3
            elif pos + 6 <= n and token[pos:pos + 3] == b"<0x":
                b = scan_hex_byte(token, pos + 3)
                if b is None:
                    out.append(token[pos])
                    pos += 1
                else:
                    out.append(b)
                    pos += 6
            else:
                out.append(token[pos])
                pos += 1
        result = bytes(out)
        if self.wordpiece_decode:
            p = self.wordpiece_prefix
            if p and result.startswith(p):
                return result[len(p):]
            return b" " + result
        if self.byte_level:
            return byte_level_unmap(result)
        return result

    # --- vocabulary -------------------------------------------------------------------------------
    def id_to_token(self, i: int) -> str | None:
        token = self.model.vocab.token(token_id("i", i))
        return None if token is None else token.decode("utf-8", "replace")

    def token_to_id(self, token: str) -> int | None:
        i = self.model.vocab.token_to_id(token_text("token", token).encode("utf-8", "surrogatepass"))
        return None if i == -1 else i

    @property
    def vocab_size(self) -> int:
        return self.model.vocab.size()


__all__ = ["PipelineTokenizer"]
