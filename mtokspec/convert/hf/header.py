"""The header of a converted file as transformers 5 sees the folder (rules S0-S8 in
``docs/design/convert.md``): the class, the special tokens, their ids, the template, and the
special, stop and prefix id lists."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mtokspec.convert.hf.classes import CLASS_DEFAULTS, SPECIAL_ATTRS, TEMPLATE_FROM_FLAGS
from mtokspec.convert.inputs import SEQ_A, as_list, id_field, json_kind, post_processor_template, token_text
from mtokspec.convert.loss import ConversionError
from mtokspec.errors import Error
from mtokspec.format import tree as t


class HeaderRules:
    """The header rules, mixed into the converter (which holds ``tj``, ``tc``, ``inp``, ``added``,
    ``model`` and the probe's state)."""

    tj: dict
    tc: dict | None
    model_type: str | None
    added: list
    model: dict
    _body: t.MtokFile | None
    _special: tuple[dict[str, str], list[str]] | None
    _token_ids: dict[str, int] | None

    # -- model type and vocab lookups ---------------------------------------------------------

    def _model_type(self) -> str:
        m = self.model
        mtype = m.get("type", "")
        if not mtype:  # the exporter's inference for files without "type"
            if "continuing_subword_prefix" in m and "merges" not in m:
                mtype = "WordPiece"
            elif isinstance(m.get("vocab"), list):
                mtype = "Unigram"
            else:
                mtype = "BPE"
        return mtype

    def vocab_lookup(self, token: str) -> int | None:
        v = self.model.get("vocab")
        if isinstance(v, dict):
            tid = v.get(token)
            return tid if isinstance(tid, int) else None
        if isinstance(v, list):
            if not hasattr(self, "_uni_index"):
                self._uni_index: dict[str, int] = {}
                for i, item in enumerate(v):
                    if isinstance(item, list) and item and isinstance(item[0], str):
                        self._uni_index.setdefault(item[0], i)
            return self._uni_index.get(token)
        return None

    def vocab_has(self, token: str) -> bool:
        return self.vocab_lookup(token) is not None

    # -- rule S1..S3 --------------------------------------------------------------------------

    def tokenizer_class(self) -> str | None:
        """The class transformers 5 loads (``AutoTokenizer.from_pretrained``): ``tokenizer_class``
        without ``Fast``, except that a Llama class over a ``tokenizer.json`` that mentions ByteLevel
        loads ``TokenizersBackend`` (Llama 3 style; LlamaTokenizer hard-codes Metaspace).  None: the
        plain backend, with no defaults of its own.  ``config.json``'s ``model_type``, which can
        override the class, is not read."""
        cls = (self.tc or {}).get("tokenizer_class")
        if not isinstance(cls, str):
            return None
        cls = cls.removesuffix("Fast")
        if cls == "LlamaTokenizer" and self._mentions_byte_level():
            return None
        return cls

    def _mentions_byte_level(self) -> bool:
        """transformers tests the file's text for ``"ByteLevel"``; the components hold it in
        practice (a vocabulary token spelled so would count too)."""
        def walk(v: Any) -> bool:
            if isinstance(v, dict):
                return any(walk(x) for x in v.values())
            if isinstance(v, list):
                return any(walk(x) for x in v)
            return v == "ByteLevel"
        parts = [self.tj.get(k) for k in ("normalizer", "pre_tokenizer", "post_processor", "decoder")]
        vocab = self.model.get("vocab")
        return walk(parts) or (isinstance(vocab, dict) and "ByteLevel" in vocab) \
            or any(a.get("content") == "ByteLevel" for a in self.added)

    def init_kwargs(self) -> dict[str, Any]:
        """Rule S1: the keyword arguments transformers 5 passes to the tokenizer class, as far as
        the special tokens go (``PreTrainedTokenizerBase._from_pretrained`` and ``__init__``)."""
        kw = dict(self.tc or {})
        kw.pop("tokenizer_class", None)
        cls = self.tokenizer_class()
        # a tokenizer.json is present: the post-processor decides, not these flags
        kw.pop("add_bos_token", None)
        kw.pop("add_eos_token", None)
        if "additional_special_tokens" in kw and not kw.get("extra_special_tokens"):
            kw["extra_special_tokens"] = kw.pop("additional_special_tokens")
        stm = self.inp.special_tokens_map
        if stm and "added_tokens_decoder" not in kw:  # the legacy map is read only without it
            for key, value in stm.items():
                if key == "extra_special_tokens" and isinstance(value, list):
                    merged = list(as_list(kw.get("extra_special_tokens"), "tokenizer_config.extra_special_tokens"))
                    merged += [v for v in value if v not in merged]
                    value = merged
                elif isinstance(value, dict):  # transformers makes an AddedToken of it
                    value = {**value, "__type": "AddedToken"}
                kw[key] = value
        # the class's own defaults (arguments of its __init__) where the files set nothing; the
        # class passes them before the rest, which orders its model-specific *_token ones first
        return {**CLASS_DEFAULTS.get(cls or "", {}), **kw}

    def special_tokens(self) -> tuple[dict[str, str], list[str]]:
        """Rule S1: ``(named, extra)``: the named special tokens in transformers 5's attribute order
        (the seven standard ones, then model-specific ``*_token`` keys), and the extra ones."""
        if self._special is not None:
            return self._special
        kw = self.init_kwargs()
        named: dict[str, str] = {}
        model_specific: dict[str, str] = {}
        extra: list[str] = []
        for key, value in kw.items():
            text = token_text(value) if isinstance(value, (str, dict)) else None
            if key in SPECIAL_ATTRS:
                if value is None:
                    continue
                if text is None:
                    raise ConversionError(f"tokenizer_config.json: {key}: expected a token, got {json_kind(value)} "
                                          "(transformers refuses it)")
                named[key] = text
            elif key == "extra_special_tokens":
                if isinstance(value, dict):
                    model_specific.update({k: x for k, x in ((k, token_text(v)) for k, v in value.items())
                                           if x is not None})
                elif isinstance(value, list):
                    extra = [x for x in map(token_text, value) if x is not None]
                elif value is not None:
                    raise ConversionError("tokenizer_config.json: extra_special_tokens: expected a list or an "
                                          f"object, got {json_kind(value)}")
            elif key.endswith("_token") and text is not None \
                    and (isinstance(value, str) or value.get("__type") == "AddedToken"):
                model_specific[key] = text  # e.g. image_token: a named special token in transformers 5
        ordered = {key: named[key] for key in SPECIAL_ATTRS if key in named}
        ordered.update((k, v) for k, v in model_specific.items() if k not in ordered)
        self._special = ordered, extra
        return self._special

    def token_ids(self) -> dict[str, int]:
        """Rule S2: the added tokens after loading: the file's ``added_tokens``, then every special
        token they lack, added as transformers 5 does (``TokenizersBackend.__init__``): the
        model vocabulary's id when it has the token, else the next free id."""
        if self._token_ids is not None:
            return self._token_ids
        ids: dict[str, int] = {}
        for at in self.added:
            ids.setdefault(at["content"], at["id"])
        named, extra = self.special_tokens()
        # tokenizers numbers added tokens the vocabulary lacks from its size on, in file order (it
        # renumbers a file whose ids are not so); the next one gets the next id
        vocab_ids = self._vocab_ids()
        next_id = len(vocab_ids) + len({c for c in ids if self.vocab_lookup(c) is None})
        for text in [*named.values(), *extra]:
            if text in ids:
                continue
            tid = self.vocab_lookup(text)
            if tid is None:
                tid, next_id = next_id, next_id + 1
            ids[text] = tid
        self._token_ids = ids
        return ids

    def _vocab_ids(self) -> list[int]:
        v = self.model.get("vocab")
        if isinstance(v, dict):
            return [i for i in v.values() if isinstance(i, int) and not isinstance(i, bool)]
        return list(range(len(v))) if isinstance(v, list) else []

    def added_id(self, content: str) -> int | None:
        return self.token_ids().get(content)

    def convert_token_to_id(self, token: str | None, _depth: int = 0) -> int | None:
        if token is None:
            return None
        tid = self.added_id(token)
        if tid is None:
            tid = self.vocab_lookup(token)
        if tid is None and _depth == 0:
            tid = self.convert_token_to_id(self.special_tokens()[0].get("unk_token"), 1)
        return tid

    def all_special_ids(self) -> list[int | None]:
        """Rule S3: named then extra special tokens, de-duplicated by text, as ids."""
        named, extra = self.special_tokens()
        seen: list[str] = []
        for v in [*named.values(), *extra]:
            if v not in seen:
                seen.append(v)
        return [self.convert_token_to_id(s) for s in seen]

    # -- rule S5/S6: templates and encode of marker strings -----------------------------------

    def effective_template(self) -> list | None:
        """Rule S5: what ``encode(text)`` puts around the text's ids.  transformers 5 keeps the
        ``tokenizer.json`` post-processor; only a class that passes ``add_bos_token`` to the base
        class itself (``TEMPLATE_FROM_FLAGS``), or a file without a post-processor, gets one rebuilt
        from the flags (``update_post_processor``: ``[bos] A [eos]``)."""
        cls = self.tokenizer_class()
        pp = self.tj.get("post_processor")
        flags = TEMPLATE_FROM_FLAGS.get(cls) if cls else None
        if flags is None and pp is not None:
            return post_processor_template(pp)
        add_bos, add_eos = flags or (False, False)
        named, _ = self.special_tokens()
        bos, eos = named.get("bos_token"), named.get("eos_token")
        out: list = []
        if add_bos and bos is not None:
            out.append(self.convert_token_to_id(bos))
        out.append(SEQ_A)
        if add_eos and eos is not None:
            out.append(self.convert_token_to_id(eos))
        return out

    def encode(self, text: str, add_special_tokens: bool) -> list[int] | None:
        """Rule S6: transformers' ``encode(text)``; None where it is not modelled exactly."""
        tid = self.added_id(text)
        if tid is not None:
            ids = [tid]
        else:
            probe = self.probe_tokenizer()
            if probe is None:
                return None
            try:
                ids = self._probe_encode(probe, text)
            except Error:  # the runtime refuses the body (e.g. a merge output not in the vocabulary)
                return None
            if ids is None:
                return None
        if not add_special_tokens:
            return ids
        tpl = self.effective_template()
        if tpl is None:
            return None
        out: list = []
        for x in tpl:
            out.extend(ids if x == SEQ_A else [x])
        return out

    # -- rule S7 ------------------------------------------------------------------------------

    def stop_ids(self) -> list[int]:
        named, _ = self.special_tokens()
        stop: list = [self.convert_token_to_id(named.get("eos_token"))]
        ids = self.encode("<|eot_id|>", True)
        if ids is not None and len(ids) == 1:
            stop.append(ids[0])
        ids = self.encode("<end_of_turn>", True)
        if ids is not None and len(ids) == 2 and ids[0] == 2:
            stop.append(ids[1])
        gc = self.inp.generation_config
        if gc is not None:
            eos = gc.get("eos_token_id")
            if isinstance(eos, int):
                stop.append(eos)
            elif isinstance(eos, Iterable) and not isinstance(eos, (str, bytes, dict)):
                stop.extend(eos)
            for i, e in enumerate(stop):
                if e is not None:  # None is dropped below; all else is written as a u32
                    id_field(e, "generation_config.json: eos_token_id")
        ids = self.encode("<turn|>", False)
        if ids is not None and len(ids) == 1 and ids[0] not in stop:
            stop.append(ids[0])
        if self.model_type == "glm_ocr":
            ids = self.encode("<|user|>", False)
            if ids is not None and len(ids) == 1:
                stop.append(ids[0])
        stop = [s for s in stop if s is not None]
        return list(set(stop))

    def prefix_ids(self) -> list[int]:
        """Rule S8: ``ids = encode("A")`` with the template; the prefix is ``ids[:-1]`` when there
        are at least two ids and ``decode(ids[-1]) == "A"``."""
        tpl = self.effective_template()
        if tpl is None or SEQ_A not in tpl:
            return []
        tid = self.added_id("A")  # an added token (the file's, or a special one transformers adds)
        if tid is not None:
            probe: tuple[list[int], str] | None = ([tid], "A")
        else:
            probe = self._probe_a_with_runtime()
            if probe is None:
                probe = self._probe_a_by_hand()
        if probe is None:
            return []
        model_ids, last_text = probe
        ids: list = []
        for x in tpl:
            ids.extend(model_ids if x == SEQ_A else [x])
        if len(ids) < 2:
            return []
        if tpl[-1] != SEQ_A or not model_ids:  # the last id is the template's: its text decides
            contents = {i: c for c, i in self.token_ids().items()}
            last_text = contents.get(ids[-1], "")
        return ids[:-1] if last_text == "A" else []

    # -- header -------------------------------------------------------------------------------

    def header(self, body: t.MtokFile) -> t.Header:
        self._body = body
        special = list(set(self.all_special_ids()))
        for at in self.added:
            if at.get("special", False) and at["id"] not in special:
                special.append(at["id"])
        special_ids = [s for s in special if s is not None]
        stop = self.stop_ids()
        prefix = self.prefix_ids()
        for name, ids in (("special", special_ids), ("stop", stop), ("prefix", prefix)):
            for i in ids:
                id_field(i, f"header: {name} id")
        return t.make_header(special_ids, stop, prefix)
