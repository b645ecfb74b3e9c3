"""The body of a converted file (normalizer, pre-tokenizer, model, decoder, added tokens, trailing
sections, post-processor ops): a transcription of MNN's exporter ``export_mtok``."""

from __future__ import annotations

import json
from typing import Any, cast

from mtokspec.convert import unicode_tables
from mtokspec.convert.hf.classes import all_byte_tokens
from mtokspec.convert.inputs import (SEQ_A, WHITESPACE_SPLIT, as_list, as_object, flag_field, id_field, int_field,
                                     json_kind, pattern_kind, post_processor_template, token_text, utf8_field)
from mtokspec.convert.loss import ConversionError
from mtokspec.format import tree as t
from mtokspec.runtime.shared.text import REGEX_META

class BodyTranscription:
    """The body, mixed into the converter."""

    tj: dict
    tc: dict | None
    inp: Any
    added: list
    model: dict
    mtype: str
    exact_whitespace: bool

    # -- normalizer ---------------------------------------------------------------------------

    def normalizer(self, norm: Any, path: str) -> t.Normalizer:
        if norm is None:
            return t.NoNormalizer()
        if not isinstance(norm, dict):
            self.loss(path, f"normalizer {norm!r:.40}", "none", True)
            return t.NoNormalizer()
        nt = norm.get("type", "")
        if nt in ("NFKC", "Precompiled", "NFKD"):
            if nt != "NFKC":
                what = ("Precompiled (the model's SentencePiece character map)" if nt == "Precompiled"
                        else "NFKD")
                self.loss(path, what, f"NFKC table (Unicode {unicode_tables.UNIDATA_VERSION})", True)
            return t.TableNormalizer(unicode_tables.nfkc_table())
        if nt == "NFC":
            return t.TableNormalizer(unicode_tables.nfc_table())
        if nt == "Prepend":
            return t.PrependNormalizer(str(norm.get("prepend", "")))
        if nt == "Replace":
            pat, kind = pattern_kind(norm.get("pattern"))
            if kind == "Regex":
                self.loss(path + ".pattern", f"Regex pattern {pat!r}", "empty pattern (no replacement)", True)
                pat = ""
            return t.ReplaceNormalizer(pat, str(norm.get("content", "")))
        if nt == "Sequence":
            return t.SequenceNormalizer([self.normalizer(n, f"{path}.normalizers[{i}]") for i, n
                                         in enumerate(as_list(norm.get("normalizers"), path + ".normalizers"))])
        if nt == "BertNormalizer":
            lowercase = flag_field(norm, "lowercase", True, path)
            # strip_accents null follows lowercase
            strip = lowercase if "strip_accents" in norm and norm["strip_accents"] is None \
                else flag_field(norm, "strip_accents", False, path)
            flags = (flag_field(norm, "clean_text", True, path), flag_field(norm, "handle_chinese_chars", True, path),
                     strip, lowercase)
            if strip:
                return t.BertNFDNormalizer(*flags, nfd_table=unicode_tables.nfd_table())
            return t.BertNormalizer(*flags)
        if nt == "Lowercase":
            return t.BertNormalizer(False, False, False, True)
        if nt == "StripAccents":
            self.loss(path, "StripAccents (removes combining marks only)",
                      "NFD then strip marks (precomposed letters lose their accents too)", True)
            return t.BertNFDNormalizer(False, False, True, False, nfd_table=unicode_tables.nfd_table())
        if nt == "Strip":
            return t.StripNormalizer(flag_field(norm, "strip_left", True, path), flag_field(norm, "strip_right", True, path))
        self.loss(path, f"normalizer {nt or '<no type>'}", "none (type 0)", True)
        return t.NoNormalizer()

    # -- pre-tokenizer ------------------------------------------------------------------------

    def pre_tokenizer(self, pt: Any, path: str) -> t.PreTokenizer:
        if pt is None:
            return t.NoPreTokenizer()
        if not isinstance(pt, dict):
            self.loss(path, f"pre-tokenizer {pt!r:.40}", "none", True)
            return t.NoPreTokenizer()
        ptype = pt.get("type", "")
        if ptype == "ByteLevel":
            if pt.get("add_prefix_space", False):
                self.loss(path + ".add_prefix_space", "add_prefix_space: true", "dropped (no space added)", True)
            if "trim_offsets" in pt:
                self.loss(path + ".trim_offsets", f"trim_offsets: {json.dumps(pt['trim_offsets'])}",
                          "dropped (offsets only)", False)
            return t.ByteLevelPreTokenizer(flag_field(pt, "use_regex", True, path))
        if ptype == "Digits":
            return t.DigitsPreTokenizer(flag_field(pt, "individual_digits", False, path))
        if ptype == "Metaspace":
            rep = pt.get("replacement", "\u2581")
            if pt.get("str_rep"):
                rep = pt["str_rep"]
            aps = flag_field(pt, "add_prefix_space", True, path)
            scheme = pt.get("prepend_scheme")
            if scheme is not None and scheme != ("always" if aps else "never"):
                self.loss(path + ".prepend_scheme", f"prepend_scheme: {scheme!r}",
                          f"add_prefix_space {int(aps)} (prepend to {'every word' if aps else 'nothing'})", True)
            if pt.get("split") is False:
                self.loss(path + ".split", "split: false", "dropped (readers split on the replacement)", True)
            return t.MetaspacePreTokenizer(str(rep), aps)
        if ptype == "Split":
            pat, kind = pattern_kind(pt.get("pattern"))
            if isinstance(pt.get("pattern"), dict) and "Regex" in pt["pattern"]:
                pat = str(pt["pattern"]["Regex"])
            if kind == "String" and has_regex_meta(pat):
                self.loss(path + ".pattern", f"String (literal) pattern {pat!r}",
                          "the same text, read as a regular expression", True)
            behavior = pt.get("behavior", "Isolated")
            bid = t.SplitBehavior.__members__.get(behavior, t.SplitBehavior.Removed)
            if behavior not in t.SplitBehavior.__members__:
                self.loss(path + ".behavior", f"behavior {behavior!r}", "Removed (1)", True)
            return t.SplitPreTokenizer(pat, flag_field(pt, "invert", False, path), bid)
        if ptype == "BertPreTokenizer":
            return t.BertPreTokenizer()
        if ptype == "Sequence":
            return t.SequencePreTokenizer([self.pre_tokenizer(p, f"{path}.pretokenizers[{i}]") for i, p
                                           in enumerate(as_list(pt.get("pretokenizers"), path + ".pretokenizers"))])
        if ptype == "WhitespaceSplit":
            return t.SplitPreTokenizer("\\s+", False, 1)
        if ptype == "Whitespace" and self.exact_whitespace:
            return t.SplitPreTokenizer(WHITESPACE_SPLIT.pattern, WHITESPACE_SPLIT.invert,
                                       WHITESPACE_SPLIT.behavior)
        self.loss(path, f"pre-tokenizer {ptype or '<no type>'}", "none (type 0)", True)
        return t.NoPreTokenizer()

    # -- model --------------------------------------------------------------------------------

    def model_tree(self) -> t.Model:
        m, mtype = self.model, self.mtype
        pt = self.tj.get("pre_tokenizer")
        if mtype == "BPE":
            vocab = m.get("vocab", {})
            if not isinstance(vocab, dict):
                raise ConversionError("model.vocab: a BPE vocab must be an object")
            merges = as_list(m.get("merges"), "model.merges")
            byte_fallback = flag_field(m, "byte_fallback", False, "model")
            byte_level = False
            if isinstance(pt, dict) and pt.get("type") == "Sequence":
                if not any(isinstance(p, dict) and p.get("type") == "ByteLevel"
                           for p in as_list(pt.get("pretokenizers"), "pre_tokenizer.pretokenizers")):
                    dec = self.tj.get("decoder")
                    if isinstance(dec, dict) and dec.get("type") == "ByteLevel":
                        byte_level = True
                    elif isinstance(dec, dict) and dec.get("type") == "Sequence":
                        if any(isinstance(d, dict) and d.get("type") == "ByteLevel"
                               for d in as_list(dec.get("decoders"), "decoder.decoders")):
                            byte_level = True
            for key, default in (("unk_token", None), ("dropout", None), ("continuing_subword_prefix", None),
                                 ("end_of_word_suffix", None), ("ignore_merges", False)):
                val = m.get(key, default)
                if val not in (None, "", False, 0, 0.0) and val != default:
                    # unk_token only matters where byte fallback cannot cover a character: with
                    # all 256 <0xNN> tokens it never does; with some missing, HF gives unk where
                    # mtokspec (no unknown token in the format) drops the character
                    changes = not (key == "unk_token" and byte_fallback and all_byte_tokens(self))
                    self.loss(f"model.{key}", f"{key}: {json.dumps(val, ensure_ascii=False)}", "dropped", changes)
            rows = vocab_rows(vocab)
            pairs = []
            for i, mg in enumerate(merges):
                if isinstance(mg, str):
                    parts = mg.split(" ", 1)
                    if len(parts) != 2:
                        self.loss(f"model.merges[{i}]", f"merge {mg!r} without a space", "skipped", True)
                        continue
                elif isinstance(mg, list) and len(mg) >= 2 and all(isinstance(x, str) for x in mg[:2]):
                    parts = mg
                else:
                    self.loss(f"model.merges[{i}]", f"merge {mg!r:.40}", "skipped", True)
                    continue
                id1, id2 = vocab.get(parts[0], -1), vocab.get(parts[1], -1)
                if id1 < 0 or id2 < 0:
                    raise ConversionError(f"model.merges[{i}]: {parts[0]!r} {parts[1]!r} names a token that "
                                          "is not in the vocab (MNN's exporter crashes on this file)")
                pairs.append((id1, id2, i))
            pairs.sort(key=lambda x: (x[0] << 32) | (x[1] & 0xFFFFFFFF))
            return t.BPEModel(byte_fallback, byte_level, rows, pairs)
        if mtype == "WordPiece":
            vocab = m.get("vocab", {})
            if not isinstance(vocab, dict):
                raise ConversionError("model.vocab: a WordPiece vocab must be an object")
            rows = vocab_rows(vocab)
            return t.WordPieceModel(str(m.get("unk_token", "[UNK]")), str(m.get("continuing_subword_prefix", "##")),
                                    int_field(m, "max_input_chars_per_word", 100, "model"), rows)
        if mtype == "Unigram":
            vocab = m.get("vocab", [])
            if not isinstance(vocab, list):
                raise ConversionError("model.vocab: a Unigram vocab must be a list")
            unk_id = m.get("unk_id", 0)
            if unk_id is None or isinstance(unk_id, bool) or not isinstance(unk_id, int) \
                    or not -2**31 <= unk_id < 2**31:
                raise ConversionError(f"model.unk_id: {unk_id!r:.40} is not an integer (MNN's exporter crashes)")
            uni_rows: list[tuple[str, int, float]] = []
            for i, item in enumerate(vocab):
                if isinstance(item, list) and len(item) >= 2:
                    score = item[1]
                    if isinstance(score, bool) or not isinstance(score, (int, float)):
                        raise ConversionError(f"model.vocab[{i}][1]: a score must be a number, got {json_kind(score)}")
                    if not isinstance(item[0], str):
                        raise ConversionError(f"model.vocab[{i}][0]: a piece must be a string, got {json_kind(item[0])}")
                    uni_rows.append((item[0], i, float(score)))
            uni_rows.sort(key=lambda x: x[0])
            return t.UnigramModel(unk_id, flag_field(m, "byte_fallback", False, "model"),
                                  [(utf8_field(p, f"model.vocab[{i}][0]"), i, s) for p, i, s in uni_rows])
        raise ConversionError(f"model.type {mtype!r}: MNN's .mtok has no such model (BPE, WordPiece, Unigram)")

    # -- decoder ------------------------------------------------------------------------------

    def decoder(self, dec: Any, path: str) -> t.Decoder:
        if dec is None:
            self.loss(path, "no decoder", "ByteLevel decoder (type 0)", False)
            return t.ByteLevelDecoder()
        dtype = dec.get("type", "") if isinstance(dec, dict) else ""
        if dtype == "ByteLevel":
            return t.ByteLevelDecoder()
        if dtype == "ByteFallback":
            return t.ByteFallbackDecoder()
        if dtype == "Metaspace":
            aps = flag_field(dec, "add_prefix_space", True, path)
            scheme = dec.get("prepend_scheme")
            if scheme is not None and (scheme == "never") == aps:
                self.loss(path + ".prepend_scheme", f"prepend_scheme: {scheme!r}", f"add_prefix_space {int(aps)}", False)
            return t.MetaspaceDecoder(str(dec.get("replacement", "\u2581")), aps)
        if dtype == "WordPiece":
            return t.WordPieceDecoder(str(dec.get("prefix", "##")), flag_field(dec, "cleanup", True, path))
        if dtype == "Fuse":
            return t.FuseDecoder()
        if dtype == "Replace":
            pat, kind = pattern_kind(dec.get("pattern"))
            if kind == "Regex":
                self.loss(path + ".pattern", f"Regex pattern {pat!r}", "empty pattern", False)
                pat = ""
            return t.ReplaceDecoder(pat, str(dec.get("content", "")))
        if dtype == "Strip":
            return t.StripDecoder(str(dec.get("content", "")), int_field(dec, "start", 0, path), int_field(dec, "stop", 0, path))
        if dtype == "Sequence":
            return t.SequenceDecoder([self.decoder(d, f"{path}.decoders[{i}]") for i, d
                                      in enumerate(as_list(dec.get("decoders"), path + ".decoders"))])
        self.loss(path, f"decoder {dtype or '<no type>'}", "ByteLevel decoder (type 0)", False)
        return t.ByteLevelDecoder()

    # -- added tokens, post-processor, trailing sections --------------------------------------

    def added_tokens(self) -> list[t.AddedToken]:
        out = []
        single_word, normalized = [], []
        for i, at in enumerate(self.added):  # ids and contents checked in __init__
            aid, where = at["id"], f"added_tokens[{i}]"
            special = flag_field(at, "special", False, where)
            if at.get("single_word", False):
                single_word.append(aid)
            if at.get("normalized", not special):
                normalized.append(aid)
            out.append(t.AddedToken(aid, special, flag_field(at, "lstrip", False, where), flag_field(at, "rstrip", False, where),
                                    at["content"]))

        def ids_text(ids: list[int]) -> str:
            shown = ", ".join(map(str, ids[:8]))
            return f"ids {shown}{', ...' if len(ids) > 8 else ''} ({len(ids)} tokens)"

        if single_word:
            self.loss("added_tokens[].single_word", f"single_word: true on {ids_text(single_word)}",
                      "dropped (matched inside words too)", True)
        if normalized and self.tj.get("normalizer") is not None:
            # without a normalizer, matching before or after normalisation is the same
            self.loss("added_tokens[].normalized", f"normalized: true on {ids_text(normalized)}",
                      "dropped (matched in the text before normalisation)", True)
        return out

    def post_ops(self) -> list[t.PostOp]:
        pp = self.tj.get("post_processor")
        ops = exporter_ops(pp)
        if not ops and isinstance(pp, dict):
            tpl = post_processor_template(pp)
            if tpl is None or tpl != [SEQ_A]:
                self.loss("post_processor", f"{pp.get('type')} post-processor",
                          "empty program (encode with special tokens adds nothing)", True)
        # op 1 always carries an id
        return [t.SequenceOp() if op == 0 else t.SpecialTokenOp(cast(int, tid)) for op, tid in ops]

    def trailing(self) -> tuple[str, str, int, str]:
        tc = self.tc
        chat_template, eos_token, bos_token, flags = "", "", "", 0
        if tc is not None:
            chat_template = tc.get("chat_template", "")
            if isinstance(chat_template, list):
                named = {d.get("name"): d.get("template") for d in chat_template
                         if isinstance(d, dict) and isinstance(d.get("name"), str) and isinstance(d.get("template"), str)}
                pick = "default" if "default" in named else next(iter(named), None)
                self.loss("tokenizer_config.chat_template", f"{len(named)} named templates",
                          f"the {pick!r} template only (MNN's exporter crashes on a list)", False)
                chat_template = named.get(pick) or ""
            elif chat_template is not None and not isinstance(chat_template, str):
                raise ConversionError("tokenizer_config.json: chat_template is neither text nor a list")
            eos_token = token_text(tc.get("eos_token")) or ""
            bos_token = token_text(tc.get("bos_token")) or ""
            if tc.get("clean_up_tokenization_spaces", False) is True:
                flags |= 0x01
        if not chat_template and self.inp.extra_files:
            self.loss(self.inp.extra_files[0], "chat template in a separate file",
                      "not embedded (the exporter reads tokenizer_config.json only)", False)
        return chat_template or "", eos_token, flags, bos_token




def vocab_rows(vocab: dict) -> list[tuple[bytes, int]]:
    """A BPE/WordPiece vocabulary as ``(token bytes, id)`` rows sorted by token (the exporter's order)."""
    return [(utf8_field(tok, "model.vocab"), id_field(tid, f"model.vocab[{tok!r:.40}]"))
            for tok, tid in sorted(vocab.items(), key=lambda x: x[0])]


def has_regex_meta(s: str) -> bool:
    return any(c in REGEX_META for c in s)


def exporter_ops(pp: Any) -> list[tuple[int, int | None]]:
    """The exporter's ``extract_single_post_processor_ops``."""
    if not isinstance(pp, dict):
        return []
    ptype = pp.get("type", "")
    if ptype == "Sequence":
        for child in as_list(pp.get("processors"), "post_processor.processors"):
            child_ops = exporter_ops(child)
            if child_ops:
                return child_ops
        return []
    if ptype != "TemplateProcessing":
        return []
    ops: list[tuple[int, int | None]] = []
    stm = as_object(pp.get("special_tokens"), "post_processor.special_tokens")
    for item in as_list(pp.get("single"), "post_processor.single"):
        if not isinstance(item, dict) or len(item) != 1:
            return []
        key, value = next(iter(item.items()))
        value = as_object(value, f"post_processor.single[].{key}")
        if key == "Sequence":
            if value.get("id") != "A":
                return []
            ops.append((0, None))
            continue
        if key == "SpecialToken":
            ids = value.get("ids", [])
            if not ids:
                name = value.get("id")
                if isinstance(name, str):
                    ids = as_object(stm.get(name), f"post_processor.special_tokens[{name!r}]").get("ids", [])
            if not isinstance(ids, list):
                return []
            ops.extend((1, id_field(i, "post_processor.special_tokens[].ids[]")) for i in ids)
            continue
        return []
    return ops
