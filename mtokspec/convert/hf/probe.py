"""Rule S8's probe: what ``encode("A")`` gives and what its last id decodes to, asked of mtokspec's
runtime where it is exact, else of a small hand model of the HF pipeline on the JSON itself."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from mtokspec.convert.hf.classes import CLASS_PIPELINES
from mtokspec.convert.loss import ConversionError
from mtokspec.convert.inputs import as_list, int_field, metaspace_prepends_as_stored, pattern_kind
from mtokspec.errors import Error
from mtokspec.format import tree as t
from mtokspec.format.byte_level import bytes_to_unicode


class ProbeRules:
    """The probe, mixed into the converter."""

    tj: dict
    tc: dict | None
    losses: list
    _body: t.MtokFile | None
    _probe: Any


    def _normalize_a(self, norm: Any, s: str) -> str:
        if not isinstance(norm, dict):
            return s
        nt = norm.get("type")
        if nt == "Sequence":
            for n in as_list(norm.get("normalizers"), "normalizer.normalizers"):
                s = self._normalize_a(n, s)
            return s
        if nt == "Prepend":
            return str(norm.get("prepend", "")) + s
        if nt == "Replace":
            pat, kind = pattern_kind(norm.get("pattern"))
            if kind == "String" and pat:
                return s.replace(pat, str(norm.get("content", "")))
            return s
        if nt == "Precompiled":  # the model's own character map, run as HF runs it
            from mtokspec.runtime.hf.precompiled import PrecompiledError, charsmap_from_json

            try:
                cm = charsmap_from_json(norm)
            except PrecompiledError as e:
                raise ConversionError(f"normalizer.{e}") from e
            return s if cm is None else cm.normalize(s)
        if nt == "Lowercase" or (nt == "BertNormalizer" and norm.get("lowercase", True)):
            return s.lower()
        if nt == "Strip":
            return s.strip()
        return s

    def _pretokenize_a(self, pt: Any, s: str) -> str:
        if not isinstance(pt, dict):
            return s
        ptype = pt.get("type")
        if ptype == "Sequence":
            for p in as_list(pt.get("pretokenizers"), "pre_tokenizer.pretokenizers"):
                s = self._pretokenize_a(p, s)
            return s
        if ptype == "ByteLevel":
            if pt.get("add_prefix_space", True) and not s.startswith(" "):
                s = " " + s
            m = bytes_to_unicode()
            return "".join(m[b] for b in s.encode("utf-8"))
        if ptype == "Metaspace":
            rep = str(pt.get("str_rep") or pt.get("replacement", "\u2581"))
            scheme = pt.get("prepend_scheme")
            prepend = scheme in ("always", "first") if scheme is not None else pt.get("add_prefix_space", True)
            s = s.replace(" ", rep)
            if prepend and not s.startswith(rep):
                s = rep + s
            return s
        return s

    def _decode_one(self, dec: Any, tokens: list[str]) -> list[str]:
        if not isinstance(dec, dict):
            return tokens
        dt = dec.get("type")
        if dt == "Sequence":
            for d in as_list(dec.get("decoders"), "decoder.decoders"):
                tokens = self._decode_one(d, tokens)
            return tokens
        if dt == "ByteLevel":
            inv = {c: b for b, c in bytes_to_unicode().items()}
            data = bytes(inv[c] if c in inv else 0 for c in "".join(tokens))
            return [data.decode("utf-8", "replace")]
        if dt == "Metaspace":
            rep = str(dec.get("str_rep") or dec.get("replacement", "\u2581"))
            scheme = dec.get("prepend_scheme")
            strip = scheme != "never" if scheme is not None else dec.get("add_prefix_space", True)
            out = []
            for i, tok in enumerate(tokens):
                tok = tok.replace(rep, " ")
                if i == 0 and strip and tok.startswith(" "):
                    tok = tok[1:]
                out.append(tok)
            return out
        if dt == "Replace":
            pat, kind = pattern_kind(dec.get("pattern"))
            if kind == "String" and pat:
                return [tok.replace(pat, str(dec.get("content", ""))) for tok in tokens]
            return tokens
        if dt == "Strip":
            c, start, stop = (str(dec.get("content", " ")), int_field(dec, "start", 0, "decoder", hi=2**16),
                              int_field(dec, "stop", 0, "decoder", hi=2**16))
            out = []
            for tok in tokens:
                for _ in range(start):
                    if tok.startswith(c):
                        tok = tok[len(c):]
                for _ in range(stop):
                    if c and tok.endswith(c):
                        tok = tok[:-len(c)]
                out.append(tok)
            return out
        if dt == "WordPiece":
            prefix = str(dec.get("prefix", "##"))
            return [tok[len(prefix):] if i and tok.startswith(prefix) else (tok if i == 0 else " " + tok)
                    for i, tok in enumerate(tokens)]
        if dt == "Fuse":
            return ["".join(tokens)]
        return tokens

    def probe_tokenizer(self):
        """``(tokenizer, prefix space, unknown token)``: mtokspec's runtime for what transformers 5
        encodes with, when it gives the same ids on a text without white space; else None.

        A class with its own ``__init__`` rebuilds the pipeline from the file's vocabulary and
        merges (``CLASS_PIPELINES``); any other class runs the ``tokenizer.json`` pipeline, which
        the converted body holds exactly unless a loss may change ids.  ByteLevel's
        ``add_prefix_space`` (not stored) becomes a space before the text; Metaspace's
        ``prepend_scheme``/``split`` do not matter on one word.  The added tokens are the file's
        and the special tokens transformers adds.  ``unknown token``: see :meth:`_probe_encode`."""
        if self._probe is not None:
            return self._probe or None
        self._probe = False
        body = self._body
        if body is None:
            return None
        cls = self.tokenizer_class()
        pipeline = CLASS_PIPELINES.get(cls) if cls else None
        prefix_space, unk = False, None
        if pipeline is not None:
            built = pipeline(self, body)
            if built is None:
                return None
            tree, prefix_space, unk = built
        else:
            # on one word, Metaspace's split does not matter, nor "first" against "always"
            harmless = (".split", ".trim_offsets", ".add_prefix_space")
            if metaspace_prepends_as_stored(self.tj.get("pre_tokenizer")):
                harmless += (".prepend_scheme",)
            pt = self.tj.get("pre_tokenizer")
            for loss in self.losses:
                if loss.path.endswith(".add_prefix_space"):
                    if loss.path != "pre_tokenizer.add_prefix_space":  # inside a Sequence: not modelled
                        return None
                    prefix_space = isinstance(pt, dict) and pt.get("type") == "ByteLevel"
                    if not prefix_space:
                        return None
                if loss.may_change_tokenization and not (loss.path.startswith("pre_tokenizer")
                                                         and loss.path.endswith(harmless)) \
                        and not loss.path.startswith("post_processor"):
                    return None
            tree = body
        known = {a.id for a in tree.added_tokens}
        extra = [t.AddedToken(i, True, False, False, c) for c, i in self.token_ids().items() if i not in known]
        from mtokspec.runtime.hf import HfTokenizer
        try:
            tok = HfTokenizer(replace(tree, header=t.make_header([], [], []), added_tokens=[*tree.added_tokens, *extra],
                                    post_processor=t.PostProcessorProgram([])))
        except Error:  # a body the runtime refuses: the hand model decides
            return None
        self._probe = (tok, prefix_space, unk)
        return self._probe

    def _probe_a_with_runtime(self) -> tuple[list[int], str] | None:
        """``(model ids of "A", decode of the last one)`` by :meth:`probe_tokenizer`."""
        probe = self.probe_tokenizer()
        if probe is None or self._decoder_lossy():
            return None
        try:
            ids = self._probe_encode(probe, "A")
            return None if ids is None else (ids, probe[0].decode(ids[-1:]) if ids else "")
        except Error:  # the runtime refuses the body: the hand model decides
            return None

    def _probe_encode(self, probe, text: str) -> list[int] | None:
        """The ids of ``text`` by the probe tokenizer.  A class BPE with an unknown token (Gemma)
        gives it, fused, for a run of characters it cannot spell, where mtokspec's BPE (the format
        has no unknown token) drops them: on one word without added tokens, the known runs are
        encoded apart (no merge crosses an unknown token) and each unknown run is the unk id."""
        tok, prefix_space, unk = probe
        if unk is None:
            return tok.encode((" " if prefix_space and not text[:1].isspace() else "") + text)
        unk_text, word = unk
        word = word + text
        unk_id = self.vocab_lookup(unk_text)  # the model's own: an added token does not count
        if any(c.isspace() for c in text) or any(a.content and a.content in text for a in tok.added.tokens):
            return None
        ids: list[int] = []
        run, in_unknown = "", False
        for c in word:
            if self.vocab_has(c) or all(self.vocab_has(f"<0x{b:02X}>") for b in c.encode("utf-8")):
                run, in_unknown = run + c, False
                continue
            if unk_id is None:  # HF's BPE raises (its unknown token is not in its vocabulary)
                return None
            if run:
                ids.extend(tok.model.tokenize(run))
                run = ""
            if not in_unknown:
                ids.append(unk_id)
            in_unknown = True
        if run:
            ids.extend(tok.model.tokenize(run))
        return ids

    def _decoder_lossy(self) -> bool:
        if self.tokenizer_class() in CLASS_PIPELINES:
            return False  # the class's own decoder, which the probe tree holds
        return any(loss.path.startswith("decoder") for loss in self.losses)

    def _probe_a_by_hand(self) -> tuple[list[int], str] | None:
        """The same by a partial model of the pipeline (normalizers that leave "A" alone or change
        it simply, ByteLevel/Metaspace prefixes, a one- or two-token vocabulary look-up)."""
        s = self._normalize_a(self.tj.get("normalizer"), "A")
        s = self._pretokenize_a(self.tj.get("pre_tokenizer"), s)
        if self.vocab_has(s):
            toks = [s]
        elif len(s) == 2 and self.vocab_has(s[0]) and self.vocab_has(s[1]):
            toks = [s[0], s[1]]
        else:
            return None
        dec = self.tj.get("decoder")
        text = "".join(self._decode_one(dec, [toks[-1]])) if dec is not None else toks[-1]
        return [cast(int, self.vocab_lookup(x)) for x in toks], text
