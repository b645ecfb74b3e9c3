"""Hugging Face tokenizer folder -> ``.mtok`` tree, byte-identical to MNN's exporter, no transformers.

``from_hf(path)`` reads ``tokenizer.json`` plus, when present next to it, ``tokenizer_config.json``,
``special_tokens_map.json`` and ``generation_config.json``, and returns a :class:`ConversionResult`
(``.tree``, ``.losses``, ``.unicode_version``).  ``mtokspec.build(result.tree)`` equals what MNN's
``LlmTokenizer.export`` (``export_mtok``) writes from the same folder, under the rules below.  Only
the standard library and mtokspec are used: no transformers, torch or tokenizers.

Body (normalizer, pre-tokenizer, model, decoder, added tokens, trailing sections)
    A transcription of ``export_mtok``: same field defaults, same sort orders (vocab by token,
    Python ``str`` order = UTF-8 byte order; merges ``(id1, id2, rank)`` with rank = index in the
    merges list, stably sorted by ``(id1 << 32) | id2``; Unigram ``(piece, index, score)`` by piece),
    same fallbacks.  Every lossy fallback adds a :class:`~mtokspec.convert.loss.Loss`.
    Tables: NFKC for ``NFKC``/``NFKD``/``Precompiled``, NFC for ``NFC``, NFD with strip-accents,
    built from this Python's ``unicodedata`` (see ``unicode_tables``; the version is reported).
    Trailing sections come from ``tokenizer_config.json`` only (chat template, ``eos_token``/
    ``bos_token`` as a string or ``{"content": ...}``, flags bit 0 = ``clean_up_tokenization_spaces
    is True``) and are always written, empty when the file is absent.  The post-processor program is
    ``TemplateProcessing.single`` (first child of a ``Sequence`` that yields ops), else empty.
    ``exact_whitespace=True`` writes HF ``Whitespace`` as :data:`WHITESPACE_SPLIT` instead of
    dropping it (not what the exporter does, so the bytes then differ from its output).

Header: how transformers 5's view of the folder is reproduced
    MNN's exporter loads the folder with ``AutoTokenizer.from_pretrained(..., trust_remote_code=True)``
    and reads the header from that object; the corpus was exported with transformers 5.24.0, whose
    rules (read from its source) are these.
    Class (S0): ``tokenizer_class`` without ``Fast``; a Llama class over a ``tokenizer.json`` that
    mentions ``ByteLevel`` loads the plain backend instead.  ``config.json``'s ``model_type`` (which
    can override the class) is not read.
    Special tokens (S1): the config's arguments without ``tokenizer_class``, ``add_bos_token`` and
    ``add_eos_token`` (dropped because a tokenizer.json is present); ``additional_special_tokens``
    becomes ``extra_special_tokens``; ``special_tokens_map.json`` overrides the config only when
    the config has no ``added_tokens_decoder``; the class's own defaults (``CLASS_DEFAULTS``) fill
    keys that neither sets; ``null`` unsets.  The named tokens are ``bos, eos, unk, sep, pad, cls,
    mask``, then model-specific ones: every other ``*_token`` key with a string (or AddedToken)
    value and the keys of an ``extra_special_tokens`` object; a list of ``extra_special_tokens``
    gives the extra ones.
    Token -> id (S2): the file's ``added_tokens``; every named or extra special token they lack is
    added as transformers does, with the model vocabulary's id when it has the token, else the next
    free id (vocabulary size, then on); any other text: the vocabulary, else the id of ``unk_token``.
    ``all_special_ids`` (S3): named then extra, de-duplicated by text, as ids.
    Special ids (S4): ``list(set(all_special_ids))`` -- evaluated by this Python, exactly as the
    exporter does -- then every ``added_tokens`` entry with ``special: true`` whose id is not yet
    listed, in file order; None dropped.  CPython iterates a set of small ints in a fixed order that
    depends only on the values, their insertion order and the set's growth policy (unchanged from
    CPython 3.6 to 3.13; ints hash to themselves, no randomisation), so the order is reproducible
    and the bytes are compared exactly.
    Template (S5), what ``encode(text)`` adds with special tokens: the ``tokenizer.json``
    post-processor (``TemplateProcessing.single``, ``Roberta``/``BertProcessing`` = ``cls A sep``,
    ``ByteLevel`` = ``A``, ``Sequence`` = children composed in order); without one, ``A``
    (transformers rebuilds it from the dropped flags, i.e. false).  A class that passes the flags
    itself rebuilds it whatever the file holds (``TEMPLATE_FROM_FLAGS``: CodeLlama ``[bos] A``,
    GPT-NeoX ``A``).
    ``encode(s)`` (S6): one id when ``s`` is an added or special token; otherwise mtokspec's runtime
    encodes it when it gives exactly transformers' ids (:meth:`_Converter.probe_tokenizer`): a class
    with its own ``__init__`` rebuilds the pipeline from the file's vocabulary and merges
    (``CLASS_PIPELINES``: Llama, CodeLlama, Gemma, GPT-2, GPT-NeoX, Qwen2; a word that needs the
    unknown token of a class BPE is spelled by hand), any other class runs the file's pipeline,
    which the converted body holds unless a loss may change ids; else it is taken to give several
    ids.
    Stop ids (S7), in the exporter's order: the id of ``eos_token``; (``im_end_id`` exists only on
    remote-code tokenizers and is not modelled); the id of ``<|eot_id|>`` when ``encode`` gives one
    id; the second id of ``<end_of_turn>`` when ``encode`` gives two ids starting with 2; every id of
    ``generation_config.json``'s ``eos_token_id`` (int or list); the id of ``<turn|>`` (no special
    tokens) when one id and not yet listed; for ``model_type='glm_ocr'`` the id of ``<|user|>``.
    None dropped, then ``list(set(...))`` evaluated by this Python (same argument as S4).
    Prefix ids (S8): ``get_prefix_tokens`` (ChatGLM remote code) is not modelled.  ``ids =
    encode("A")`` with the template; the prefix is ``ids[:-1]`` when there are at least two ids and
    ``decode(ids[-1]) == "A"``.  The runtime answers (S6) where it is exact, decoder included;
    otherwise a partial hand model: "A" through the normalizer (Prepend, Replace with a string,
    Lowercase, BertNormalizer lowercase, Strip, Sequence), the pre-tokenizer (``ByteLevel``
    add_prefix_space -> ``ĠA``; ``Metaspace`` with prepend -> ``▁A``), a one- or two-token
    vocabulary look-up and the decoder (ByteLevel, Metaspace, Replace, Strip, WordPiece,
    ByteFallback, Fuse, Sequence).
    Each rule has a fixture folder (``tests/fixtures/hf5``) checked byte for byte against MNN's
    exporter under transformers 5.24.0.

    Where transformers 4 differed (what this module modelled before, from transformers 4's
    behaviour; not offered as an option, since the exporter now runs under transformers 5):
    special_tokens_map.json always won over the config; ``additional_special_tokens`` of the map
    won over the config's; other ``*_token`` keys and ``extra_special_tokens`` were not special;
    Gemma had no ``mask_token`` default and CodeLlama no named fill-in-the-middle tokens; a special
    token missing from the vocabulary was not added (its id was ``unk_token``'s, or None); a
    Llama-like class (Llama, CodeLlama, Gemma) rebuilt the template from ``add_bos_token`` (default
    true) and ``add_eos_token`` (default false) whatever ``tokenizer.json`` held, so a folder with
    ``add_bos_token: true`` and no BOS in its template got a BOS prefix; encode ran the file's
    pipeline for every class; the exporter's first choice, the slow (SentencePiece) class, existed.

Checked against all six reference folders of the corpus (byte-identical, header included).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from mtokspec import tree as t
from mtokspec.byte_level import bytes_to_unicode
from mtokspec.convert import unicode_tables
from mtokspec.convert.loss import ConversionError, Loss
from mtokspec.errors import Error

__all__ = ["ConversionResult", "HFInputs", "from_hf", "from_hf_tree", "from_hf_inputs",
           "load_hf", "WHITESPACE_SPLIT", "CLASS_DEFAULTS", "TEMPLATE_FROM_FLAGS", "CLASS_PIPELINES"]

WHITESPACE_SPLIT = t.SplitPreTokenizer(
    pattern=(r"[\p{L}\p{Alphabetic}\p{M}\d\p{Connector_Punctuation}_\p{Join_Control}]+"
             r"|[^\p{L}\p{Alphabetic}\p{M}\d\p{Connector_Punctuation}_\p{Join_Control}\s\p{White_Space}]+"),
    invert=True, behavior=1)
"""HF ``Whitespace`` as a Split: the pieces are runs of word characters (Rust regex ``\\w`` =
Alphabetic, Mark, Nd, Pc, Join_Control) or runs of other non-space characters (``\\s`` = White_Space);
the white space between them is removed.  HF's ``Split`` runs Oniguruma, whose ``\\w`` differs from
the Rust ``\\w`` of ``Whitespace`` (e.g. U+00B2, U+200D), hence the spelled-out classes; with HF
``tokenizers`` this Split gives the same ``pre_tokenize_str`` as ``Whitespace`` on every code point.
The redundant ``\\p{L}``, ``\\d``, ``_`` and ``\\s`` are for MNN's C++ runtime, whose regex engine folds
each non-ASCII character to its general category and reads only the first letter of a property
name (``\\p{Alphabetic}``, ``\\p{Join_Control}``, ``\\p{Connector_Punctuation}``, ``\\p{White_Space}``
become empty classes there).  It then splits ASCII text exactly like HF but differs on non-ASCII
characters whose class it cannot see: No (e.g. U+00B2: MNN word, HF not), So with Other_Alphabetic
(circled letters), non-ASCII Pc (U+203F), ZWNJ/ZWJ, and U+0085/U+2028/U+2029 (HF space, MNN not)."""

SPECIAL_ATTRS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                 "mask_token")

_LLAMA = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
_GPT2 = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
_GEMMA = {"bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>"}
_NEOX = {**_GPT2, "pad_token": "<|padding|>"}
# the fill-in-the-middle tokens are *_token arguments: named special tokens in transformers 5
_CODE_LLAMA = {**_LLAMA, "prefix_token": "\u2581<PRE>", "middle_token": "\u2581<MID>", "suffix_token": "\u2581<SUF>",
               "eot_token": "\u2581<EOT>", "fill_token": "<FILL_ME>"}
_BERT = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"}
CLASS_DEFAULTS: dict[str, dict[str, str]] = {
    "LlamaTokenizer": _LLAMA, "CodeLlamaTokenizer": _CODE_LLAMA, "GemmaTokenizer": _GEMMA,
    "GPTNeoXTokenizer": _NEOX,
    "T5Tokenizer": {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"},
    "BertTokenizer": _BERT, "GPT2Tokenizer": _GPT2, "WhisperTokenizer": _GPT2,
    "RobertaTokenizer": {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
                         "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>"},
    "Qwen2Tokenizer": {"unk_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
}
"""Defaults of the special-token arguments of transformers 5.24's tokenizer classes (rule S1), by
class name without ``Fast`` (transformers 5 has one class for both names)."""

TEMPLATE_FROM_FLAGS: dict[str, tuple[bool, bool]] = {"CodeLlamaTokenizer": (True, False),
                                                     "GPTNeoXTokenizer": (False, False)}
"""Classes whose post-processor transformers 5 rebuilds whatever the file holds (rule S5), with the
``(add_bos_token, add_eos_token)`` their ``__init__`` passes (the config's values are dropped)."""

UNCHECKED = "tokenizer.json holds a malformed value in a field without a check of its own"
"""How a refusal that no field check made begins (tests/test_fuzz.py asserts none happens)."""

_SEQ_A = "A"  # marker for "sequence A" inside a template list


@dataclass
class HFInputs:
    """The files a conversion reads (parsed JSON; None when absent)."""

    tokenizer_json: dict
    tokenizer_config: dict | None = None
    special_tokens_map: dict | None = None
    generation_config: dict | None = None
    folder: Path | None = None
    extra_files: list[str] = field(default_factory=list)


@dataclass
class ConversionResult:
    """``tree``: the ``.mtok`` tree; ``losses``: what it could not keep; ``unicode_version``: the
    Unicode version of the embedded tables."""

    tree: t.MtokFile
    losses: list[Loss]
    unicode_version: str


def _read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_hf(path: str | os.PathLike) -> HFInputs:
    """Read a model folder (or a ``tokenizer.json`` file and its siblings)."""
    p = Path(path)
    if p.is_dir():
        folder, tj_path = p, p / "tokenizer.json"
    else:
        folder, tj_path = p.parent, p
    if not tj_path.is_file():
        raise ConversionError(f"{tj_path}: no tokenizer.json (the .mtok converter needs it)")
    try:
        tj = _read_json(tj_path)
    except (OSError, ValueError, RecursionError) as e:
        raise ConversionError(f"{tj_path}: cannot read: {e}") from e
    if not isinstance(tj, dict):
        raise ConversionError(f"{tj_path}: not a JSON object")

    def opt(name: str) -> Any:
        f = folder / name
        if not f.is_file():
            return None
        try:
            return _read_json(f)
        except (OSError, ValueError, RecursionError) as e:
            raise ConversionError(f"{f}: cannot read: {e}") from e

    tc = opt("tokenizer_config.json")
    stm = opt("special_tokens_map.json")
    # The exporter swallows every error while reading generation_config.json.
    try:
        gc = opt("generation_config.json")
    except ConversionError:
        gc = None
    extra = [n for n in ("chat_template.jinja", "chat_template.json") if (folder / n).is_file()]
    return HFInputs(tj, tc if isinstance(tc, dict) else None, stm if isinstance(stm, dict) else None,
                    gc if isinstance(gc, dict) else None, folder, extra)


def from_hf(path: str | os.PathLike, *, strict: bool = False, exact_whitespace: bool = False,
            model_type: str | None = None, target: str = "exporter") -> ConversionResult:
    """Convert a Hugging Face tokenizer folder (or ``tokenizer.json``) to a ``.mtok`` tree.

    ``strict=True`` raises :class:`ConversionError` listing the losses instead of returning.
    ``exact_whitespace=True`` writes HF ``Whitespace`` as :data:`WHITESPACE_SPLIT`.
    ``model_type`` is the exporter's model type (only ``glm_ocr`` changes anything).
    ``target="mnn"``: the bytes for which MNN's runtime gives HF's answers
    (:mod:`mtokspec.convert.mnn_target`); the losses are then what MNN still does differently.
    """
    return from_hf_inputs(load_hf(path), strict=strict, exact_whitespace=exact_whitespace,
                          model_type=model_type, target=target)


def from_hf_tree(path: str | os.PathLike, **kwargs) -> t.MtokFile:
    """Just the tree of :func:`from_hf` (losses ignored unless ``strict=True``)."""
    return from_hf(path, **kwargs).tree


def from_hf_inputs(inputs: HFInputs, *, strict: bool = False, exact_whitespace: bool = False,
                   model_type: str | None = None, target: str = "exporter") -> ConversionResult:
    """Convert already-loaded files (see :func:`load_hf`)."""
    if target not in ("exporter", "mnn"):
        raise ConversionError(f"target {target!r}: expected 'exporter' (MNN's exporter's bytes) or 'mnn'")
    try:
        conv = _Converter(inputs, exact_whitespace=exact_whitespace, model_type=model_type)
        tree = conv.run()
        if target == "mnn":
            from mtokspec.convert.mnn_target import retarget_conversion

            tree, conv.losses = retarget_conversion(inputs, tree, conv.losses,
                                                    conv._template_of(inputs.tokenizer_json.get("post_processor")))
    except ConversionError:
        raise
    except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError, RecursionError) as e:
        # the checks name each field the fuzzer (tools/fuzz.py) has found malformed; this keeps a
        # field none of them covers a refusal too
        raise ConversionError(f"{UNCHECKED} ({type(e).__name__}: {e})") from e
    if strict and conv.losses:
        raise ConversionError("conversion would lose information (strict mode)", conv.losses)
    return ConversionResult(tree, conv.losses, unicode_tables.UNIDATA_VERSION)


# ---------------------------------------------------------------------------------------------
# helpers shared with the header rules


def _kind(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _obj(value: Any, path: str) -> dict:
    """``value`` as an object (``null`` counts as empty); anything else is refused."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConversionError(f"{path}: expected an object, got {_kind(value)}")
    return value


def _list(value: Any, path: str) -> list:
    """``value`` as a list (``null`` counts as empty); anything else is refused."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConversionError(f"{path}: expected a list, got {_kind(value)}")
    return value


def _flag(d: dict, key: str, default: bool, path: str) -> bool:
    """A boolean field; the exporter writes ``int(value)``, so 0 and 1 count as false and true."""
    v = d.get(key, default)
    if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
        return bool(v)
    raise ConversionError(f"{path}.{key}: expected true or false, got {v!r:.40}")


def _int(d: dict, key: str, default: int, path: str, lo: int = 0, hi: int = 2**32 - 1) -> int:
    """An integer field in ``lo..hi`` (the range the .mtok field holds)."""
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ConversionError(f"{path}.{key}: expected an integer in {lo}..{hi}, got {v!r:.40}")
    return v


def _id(value: Any, path: str) -> int:
    """A token id: an integer the .mtok's u32 fields hold."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise ConversionError(f"{path}: a token id must be an integer in 0..2^32-1, got {value!r:.40}")
    return value


def _utf8(text: Any, path: str) -> bytes:
    """The UTF-8 bytes of a token; JSON escapes can spell a lone surrogate, which has none."""
    if not isinstance(text, str):
        raise ConversionError(f"{path}: expected a string, got {_kind(text)}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ConversionError(f"{path}: {text!r:.40} is not Unicode text (a lone surrogate)") from e


def _token_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dict):
        c = value.get("content")
        return c if isinstance(c, str) else None
    return value if isinstance(value, str) else str(value)


def _pattern_kind(pattern: Any) -> tuple[str, str | None]:
    """(text, 'Regex'|'String'|None) of a HF pattern field."""
    if isinstance(pattern, dict):
        if "Regex" in pattern:
            return str(pattern["Regex"]), "Regex"
        if "String" in pattern:
            return str(pattern["String"]), "String"
        return "", None
    if isinstance(pattern, str):
        return pattern, None
    return "", None


class _Converter:
    def __init__(self, inputs: HFInputs, *, exact_whitespace: bool, model_type: str | None):
        self.inp = inputs
        self.tj = inputs.tokenizer_json
        self.tc = inputs.tokenizer_config
        self.exact_whitespace = exact_whitespace
        self.model_type = model_type
        self.losses: list[Loss] = []
        model = self.tj.get("model") or {}
        if not isinstance(model, dict):
            raise ConversionError("tokenizer.json: 'model' is not an object")
        self.model = model
        self.added = _list(self.tj.get("added_tokens"), "added_tokens")
        for i, at in enumerate(self.added):
            at = _obj(at, f"added_tokens[{i}]")
            _id(at.get("id"), f"added_tokens[{i}].id")
            if not isinstance(at.get("content"), str):
                raise ConversionError(f"added_tokens[{i}].content: expected a string, got {_kind(at.get('content'))}")
        self.mtype = self._model_type()
        self._body: t.MtokFile | None = None  # the converted body, once built (the probes run it)
        self._probe: Any = None  # probe_tokenizer's answer; False when there is none
        self._special: tuple[dict[str, str], list[str]] | None = None
        self._token_ids: dict[str, int] | None = None

    def loss(self, path: str, what: str, replacement: str, may_change: bool) -> None:
        self.losses.append(Loss(path, what, replacement, may_change))

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
                    merged = list(_list(kw.get("extra_special_tokens"), "tokenizer_config.extra_special_tokens"))
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
            text = _token_text(value) if isinstance(value, (str, dict)) else None
            if key in SPECIAL_ATTRS:
                if value is None:
                    continue
                if text is None:
                    raise ConversionError(f"tokenizer_config.json: {key}: expected a token, got {_kind(value)} "
                                          "(transformers refuses it)")
                named[key] = text
            elif key == "extra_special_tokens":
                if isinstance(value, dict):
                    model_specific.update({k: x for k, x in ((k, _token_text(v)) for k, v in value.items())
                                           if x is not None})
                elif isinstance(value, list):
                    extra = [x for x in map(_token_text, value) if x is not None]
                elif value is not None:
                    raise ConversionError("tokenizer_config.json: extra_special_tokens: expected a list or an "
                                          f"object, got {_kind(value)}")
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

    def _template_of(self, pp: Any) -> list | None:
        """A post-processor as a list of ids and _SEQ_A, or None when it is not modelled."""
        if pp is None:
            return [_SEQ_A]
        if not isinstance(pp, dict):
            return [_SEQ_A]
        ptype = pp.get("type")
        if ptype == "TemplateProcessing":
            out: list = []
            st = _obj(pp.get("special_tokens"), "post_processor.special_tokens")
            for item in _list(pp.get("single"), "post_processor.single"):
                if not isinstance(item, dict) or len(item) != 1:
                    return None
                key, value = next(iter(item.items()))
                if key == "Sequence":
                    out.append(_SEQ_A)
                elif key == "SpecialToken" and isinstance(value, dict) and isinstance(value.get("id"), str):
                    entry = _obj(st.get(value["id"]), f"post_processor.special_tokens[{value['id']!r}]")
                    ids = _list(entry.get("ids"), f"post_processor.special_tokens[{value['id']!r}].ids")
                    out.extend(_id(i, "post_processor.special_tokens[].ids[]") for i in ids)
                else:
                    return None
            return out
        if ptype in ("RobertaProcessing", "BertProcessing"):
            cls: Any = pp.get("cls")  # malformed values raise below and are caught
            sep: Any = pp.get("sep")
            try:
                return [int(cls[1]), _SEQ_A, int(sep[1])]
            except (TypeError, IndexError, KeyError, ValueError, OverflowError):  # a dict, a short list, inf ...
                return None
        if ptype == "ByteLevel":
            return [_SEQ_A]
        if ptype == "Sequence":
            cur: list = [_SEQ_A]
            for child in _list(pp.get("processors"), "post_processor.processors"):
                tpl = self._template_of(child)
                if tpl is None:
                    return None
                new: list = []
                for x in tpl:
                    new.extend(cur if x == _SEQ_A else [x])
                cur = new
            return cur
        return None

    def effective_template(self) -> list | None:
        """Rule S5: what ``encode(text)`` puts around the text's ids.  transformers 5 keeps the
        ``tokenizer.json`` post-processor; only a class that passes ``add_bos_token`` to the base
        class itself (``TEMPLATE_FROM_FLAGS``), or a file without a post-processor, gets one rebuilt
        from the flags (``update_post_processor``: ``[bos] A [eos]``)."""
        cls = self.tokenizer_class()
        pp = self.tj.get("post_processor")
        flags = TEMPLATE_FROM_FLAGS.get(cls) if cls else None
        if flags is None and pp is not None:
            return self._template_of(pp)
        add_bos, add_eos = flags or (False, False)
        named, _ = self.special_tokens()
        bos, eos = named.get("bos_token"), named.get("eos_token")
        out: list = []
        if add_bos and bos is not None:
            out.append(self.convert_token_to_id(bos))
        out.append(_SEQ_A)
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
            out.extend(ids if x == _SEQ_A else [x])
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
                    _id(e, "generation_config.json: eos_token_id")
        ids = self.encode("<turn|>", False)
        if ids is not None and len(ids) == 1 and ids[0] not in stop:
            stop.append(ids[0])
        if self.model_type == "glm_ocr":
            ids = self.encode("<|user|>", False)
            if ids is not None and len(ids) == 1:
                stop.append(ids[0])
        stop = [s for s in stop if s is not None]
        return list(set(stop))

    # -- rule S8 ------------------------------------------------------------------------------

    def _normalize_a(self, norm: Any, s: str) -> str:
        if not isinstance(norm, dict):
            return s
        nt = norm.get("type")
        if nt == "Sequence":
            for n in _list(norm.get("normalizers"), "normalizer.normalizers"):
                s = self._normalize_a(n, s)
            return s
        if nt == "Prepend":
            return str(norm.get("prepend", "")) + s
        if nt == "Replace":
            pat, kind = _pattern_kind(norm.get("pattern"))
            if kind == "String" and pat:
                return s.replace(pat, str(norm.get("content", "")))
            return s
        if nt == "Precompiled":  # the model's own character map, run as HF runs it
            from mtokspec.runtime.precompiled import PrecompiledError, charsmap_from_json

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
            for p in _list(pt.get("pretokenizers"), "pre_tokenizer.pretokenizers"):
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
            for d in _list(dec.get("decoders"), "decoder.decoders"):
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
            pat, kind = _pattern_kind(dec.get("pattern"))
            if kind == "String" and pat:
                return [tok.replace(pat, str(dec.get("content", ""))) for tok in tokens]
            return tokens
        if dt == "Strip":
            c, start, stop = (str(dec.get("content", " ")), _int(dec, "start", 0, "decoder", hi=2**16),
                              _int(dec, "stop", 0, "decoder", hi=2**16))
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
            if _metaspace_prepends_as_stored(self.tj.get("pre_tokenizer")):
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
        from mtokspec.runtime import Tokenizer
        try:
            tok = Tokenizer(replace(tree, header=t.make_header([], [], []), added_tokens=[*tree.added_tokens, *extra],
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

    def prefix_ids(self) -> list[int]:
        """Rule S8: ``ids = encode("A")`` with the template; the prefix is ``ids[:-1]`` when there
        are at least two ids and ``decode(ids[-1]) == "A"``."""
        tpl = self.effective_template()
        if tpl is None or _SEQ_A not in tpl:
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
            ids.extend(model_ids if x == _SEQ_A else [x])
        if len(ids) < 2:
            return []
        if tpl[-1] != _SEQ_A or not model_ids:  # the last id is the template's: its text decides
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
                _id(i, f"header: {name} id")
        return t.make_header(special_ids, stop, prefix)

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
            pat, kind = _pattern_kind(norm.get("pattern"))
            if kind == "Regex":
                self.loss(path + ".pattern", f"Regex pattern {pat!r}", "empty pattern (no replacement)", True)
                pat = ""
            return t.ReplaceNormalizer(pat, str(norm.get("content", "")))
        if nt == "Sequence":
            return t.SequenceNormalizer([self.normalizer(n, f"{path}.normalizers[{i}]") for i, n
                                         in enumerate(_list(norm.get("normalizers"), path + ".normalizers"))])
        if nt == "BertNormalizer":
            lowercase = _flag(norm, "lowercase", True, path)
            # strip_accents null follows lowercase
            strip = lowercase if "strip_accents" in norm and norm["strip_accents"] is None \
                else _flag(norm, "strip_accents", False, path)
            flags = (_flag(norm, "clean_text", True, path), _flag(norm, "handle_chinese_chars", True, path),
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
            return t.StripNormalizer(_flag(norm, "strip_left", True, path), _flag(norm, "strip_right", True, path))
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
            return t.ByteLevelPreTokenizer(_flag(pt, "use_regex", True, path))
        if ptype == "Digits":
            return t.DigitsPreTokenizer(_flag(pt, "individual_digits", False, path))
        if ptype == "Metaspace":
            rep = pt.get("replacement", "\u2581")
            if pt.get("str_rep"):
                rep = pt["str_rep"]
            aps = _flag(pt, "add_prefix_space", True, path)
            scheme = pt.get("prepend_scheme")
            if scheme is not None and scheme != ("always" if aps else "never"):
                self.loss(path + ".prepend_scheme", f"prepend_scheme: {scheme!r}",
                          f"add_prefix_space {int(aps)} (prepend to {'every word' if aps else 'nothing'})", True)
            if pt.get("split") is False:
                self.loss(path + ".split", "split: false", "dropped (readers split on the replacement)", True)
            return t.MetaspacePreTokenizer(str(rep), aps)
        if ptype == "Split":
            pat, kind = _pattern_kind(pt.get("pattern"))
            if isinstance(pt.get("pattern"), dict) and "Regex" in pt["pattern"]:
                pat = str(pt["pattern"]["Regex"])
            if kind == "String" and _has_regex_meta(pat):
                self.loss(path + ".pattern", f"String (literal) pattern {pat!r}",
                          "the same text, read as a regular expression", True)
            behavior = pt.get("behavior", "Isolated")
            bid = t.SplitBehavior.__members__.get(behavior, t.SplitBehavior.Removed)
            if behavior not in t.SplitBehavior.__members__:
                self.loss(path + ".behavior", f"behavior {behavior!r}", "Removed (1)", True)
            return t.SplitPreTokenizer(pat, _flag(pt, "invert", False, path), bid)
        if ptype == "BertPreTokenizer":
            return t.BertPreTokenizer()
        if ptype == "Sequence":
            return t.SequencePreTokenizer([self.pre_tokenizer(p, f"{path}.pretokenizers[{i}]") for i, p
                                           in enumerate(_list(pt.get("pretokenizers"), path + ".pretokenizers"))])
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
            merges = _list(m.get("merges"), "model.merges")
            byte_fallback = _flag(m, "byte_fallback", False, "model")
            byte_level = False
            if isinstance(pt, dict) and pt.get("type") == "Sequence":
                if not any(isinstance(p, dict) and p.get("type") == "ByteLevel"
                           for p in _list(pt.get("pretokenizers"), "pre_tokenizer.pretokenizers")):
                    dec = self.tj.get("decoder")
                    if isinstance(dec, dict) and dec.get("type") == "ByteLevel":
                        byte_level = True
                    elif isinstance(dec, dict) and dec.get("type") == "Sequence":
                        if any(isinstance(d, dict) and d.get("type") == "ByteLevel"
                               for d in _list(dec.get("decoders"), "decoder.decoders")):
                            byte_level = True
            for key, default in (("unk_token", None), ("dropout", None), ("continuing_subword_prefix", None),
                                 ("end_of_word_suffix", None), ("ignore_merges", False)):
                val = m.get(key, default)
                if val not in (None, "", False, 0, 0.0) and val != default:
                    # unk_token only matters where byte fallback cannot cover a character: with
                    # all 256 <0xNN> tokens it never does; with some missing, HF gives unk where
                    # mtokspec (no unknown token in the format) drops the character
                    changes = not (key == "unk_token" and byte_fallback and _all_byte_tokens(self))
                    self.loss(f"model.{key}", f"{key}: {json.dumps(val, ensure_ascii=False)}", "dropped", changes)
            rows = _vocab_rows(vocab)
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
            rows = _vocab_rows(vocab)
            return t.WordPieceModel(str(m.get("unk_token", "[UNK]")), str(m.get("continuing_subword_prefix", "##")),
                                    _int(m, "max_input_chars_per_word", 100, "model"), rows)
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
                        raise ConversionError(f"model.vocab[{i}][1]: a score must be a number, got {_kind(score)}")
                    if not isinstance(item[0], str):
                        raise ConversionError(f"model.vocab[{i}][0]: a piece must be a string, got {_kind(item[0])}")
                    uni_rows.append((item[0], i, float(score)))
            uni_rows.sort(key=lambda x: x[0])
            return t.UnigramModel(unk_id, _flag(m, "byte_fallback", False, "model"),
                                  [(_utf8(p, f"model.vocab[{i}][0]"), i, s) for p, i, s in uni_rows])
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
            aps = _flag(dec, "add_prefix_space", True, path)
            scheme = dec.get("prepend_scheme")
            if scheme is not None and (scheme == "never") == aps:
                self.loss(path + ".prepend_scheme", f"prepend_scheme: {scheme!r}", f"add_prefix_space {int(aps)}", False)
            return t.MetaspaceDecoder(str(dec.get("replacement", "\u2581")), aps)
        if dtype == "WordPiece":
            return t.WordPieceDecoder(str(dec.get("prefix", "##")), _flag(dec, "cleanup", True, path))
        if dtype == "Fuse":
            return t.FuseDecoder()
        if dtype == "Replace":
            pat, kind = _pattern_kind(dec.get("pattern"))
            if kind == "Regex":
                self.loss(path + ".pattern", f"Regex pattern {pat!r}", "empty pattern", False)
                pat = ""
            return t.ReplaceDecoder(pat, str(dec.get("content", "")))
        if dtype == "Strip":
            return t.StripDecoder(str(dec.get("content", "")), _int(dec, "start", 0, path), _int(dec, "stop", 0, path))
        if dtype == "Sequence":
            return t.SequenceDecoder([self.decoder(d, f"{path}.decoders[{i}]") for i, d
                                      in enumerate(_list(dec.get("decoders"), path + ".decoders"))])
        self.loss(path, f"decoder {dtype or '<no type>'}", "ByteLevel decoder (type 0)", False)
        return t.ByteLevelDecoder()

    # -- added tokens, post-processor, trailing sections --------------------------------------

    def added_tokens(self) -> list[t.AddedToken]:
        out = []
        single_word, normalized = [], []
        for i, at in enumerate(self.added):  # ids and contents checked in __init__
            aid, where = at["id"], f"added_tokens[{i}]"
            special = _flag(at, "special", False, where)
            if at.get("single_word", False):
                single_word.append(aid)
            if at.get("normalized", not special):
                normalized.append(aid)
            out.append(t.AddedToken(aid, special, _flag(at, "lstrip", False, where), _flag(at, "rstrip", False, where),
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
        ops = _extract_ops(pp)
        if not ops and isinstance(pp, dict):
            tpl = self._template_of(pp)
            if tpl is None or tpl != [_SEQ_A]:
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
            eos_token = _token_text(tc.get("eos_token")) or ""
            bos_token = _token_text(tc.get("bos_token")) or ""
            if tc.get("clean_up_tokenization_spaces", False) is True:
                flags |= 0x01
        if not chat_template and self.inp.extra_files:
            self.loss(self.inp.extra_files[0], "chat template in a separate file",
                      "not embedded (the exporter reads tokenizer_config.json only)", False)
        return chat_template or "", eos_token, flags, bos_token

    def run(self) -> t.MtokFile:
        normalizer = self.normalizer(self.tj.get("normalizer"), "normalizer")
        pre = self.pre_tokenizer(self.tj.get("pre_tokenizer"), "pre_tokenizer")
        model = self.model_tree()
        decoder = self.decoder(self.tj.get("decoder"), "decoder")
        added = self.added_tokens()
        chat, eos, flags, bos = self.trailing()
        ops = self.post_ops()
        body = t.MtokFile(header=t.make_header([], [], []), normalizer=normalizer, pre_tokenizer=pre, model=model,
                          decoder=decoder, added_tokens=added, chat_template=chat, eos_token=eos,
                          flags=flags, bos_token=bos, post_processor=t.PostProcessorProgram(ops))
        # the header last: its encode("A") probe runs the body when it can
        return replace(body, header=self.header(body))


_REGEX_META = set(".^$*+?{}[]\\|()")


def _vocab_rows(vocab: dict) -> list[tuple[bytes, int]]:
    """A BPE/WordPiece vocabulary as ``(token bytes, id)`` rows sorted by token (the exporter's order)."""
    return [(_utf8(tok, "model.vocab"), _id(tid, f"model.vocab[{tok!r:.40}]"))
            for tok, tid in sorted(vocab.items(), key=lambda x: x[0])]


def _has_regex_meta(s: str) -> bool:
    return any(c in _REGEX_META for c in s)


def _extract_ops(pp: Any) -> list[tuple[int, int | None]]:
    """The exporter's ``extract_single_post_processor_ops``."""
    if not isinstance(pp, dict):
        return []
    ptype = pp.get("type", "")
    if ptype == "Sequence":
        for child in _list(pp.get("processors"), "post_processor.processors"):
            child_ops = _extract_ops(child)
            if child_ops:
                return child_ops
        return []
    if ptype != "TemplateProcessing":
        return []
    ops: list[tuple[int, int | None]] = []
    stm = _obj(pp.get("special_tokens"), "post_processor.special_tokens")
    for item in _list(pp.get("single"), "post_processor.single"):
        if not isinstance(item, dict) or len(item) != 1:
            return []
        key, value = next(iter(item.items()))
        value = _obj(value, f"post_processor.single[].{key}")
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
                    ids = _obj(stm.get(name), f"post_processor.special_tokens[{name!r}]").get("ids", [])
            if not isinstance(ids, list):
                return []
            ops.extend((1, _id(i, "post_processor.special_tokens[].ids[]")) for i in ids)
            continue
        return []
    return ops


def _add_prefix_space(conv: _Converter, default: bool) -> bool:
    aps = (conv.tc or {}).get("add_prefix_space")
    return default if aps is None else bool(aps)


def _unk(conv: _Converter, word_start: str):
    """``(unknown token, text before the word)`` when a class BPE with byte fallback may need its
    unknown token (not every byte has a <0xNN> token), else None."""
    # the classes pass str(unk_token): an unset one is the text "None"
    unk = str(conv.special_tokens()[0].get("unk_token"))
    return None if _all_byte_tokens(conv) else (unk, word_start)


def _metaspace_class(conv: _Converter, body: t.MtokFile, *, unk: bool, strip_always: bool):
    """Llama and CodeLlama: no normalizer; Metaspace (prepend unless ``add_prefix_space`` is
    false; "first"/"always" and ``split=False`` are the same on one word); BPE with byte fallback;
    decoder Replace ▁, ByteFallback, Fuse, Strip one leading space.  Llama's BPE has no unknown
    token (what it cannot spell is dropped, as by mtokspec's BPE); CodeLlama's has one."""
    aps = _add_prefix_space(conv, True)
    decoders: list[t.Decoder] = [t.ReplaceDecoder("\u2581", " "), t.ByteFallbackDecoder(), t.FuseDecoder()]
    if aps or strip_always:
        decoders.append(t.StripDecoder(" ", 1, 0))
    tree = replace(body, normalizer=t.NoNormalizer(), pre_tokenizer=t.MetaspacePreTokenizer("\u2581", aps),
                   model=t.BPEModel(True, False, body.model.vocab, body.model.merges),
                   decoder=t.SequenceDecoder(decoders))
    return tree, False, (_unk(conv, "\u2581" if aps else "") if unk else None)


def _byte_level_class(conv: _Converter, body: t.MtokFile, *, nfc: bool, split: str | None):
    """GPT-2, GPT-NeoX, Qwen2: [NFC]; [Split(pattern, isolated)] and ByteLevel with
    ``add_prefix_space`` (default false; a space before the text); BPE without unknown token or
    byte fallback; decoder ByteLevel."""
    aps = _add_prefix_space(conv, False)
    pre: t.PreTokenizer = t.ByteLevelPreTokenizer(split is None)
    if split is not None:
        if aps:  # after a Split, HF prefixes every piece: a space before the text is not that
            return None
        pre = t.SequencePreTokenizer([t.SplitPreTokenizer(split, False, 0), t.ByteLevelPreTokenizer(False)])
    tree = replace(body, normalizer=t.TableNormalizer(unicode_tables.nfc_table()) if nfc else t.NoNormalizer(),
                   pre_tokenizer=pre, model=t.BPEModel(False, False, body.model.vocab, body.model.merges),
                   decoder=t.ByteLevelDecoder())
    return tree, aps, None


def _gemma_class(conv: _Converter, body: t.MtokFile):
    """Gemma: Replace " " -> ▁, Split on " " merged with the previous piece, BPE with byte
    fallback and an unknown token, decoder Replace ▁, ByteFallback, Fuse."""
    tree = replace(body, normalizer=t.ReplaceNormalizer(" ", "\u2581"), pre_tokenizer=t.SplitPreTokenizer(" ", False, 2),
                   model=t.BPEModel(True, False, body.model.vocab, body.model.merges),
                   decoder=t.SequenceDecoder([t.ReplaceDecoder("\u2581", " "), t.ByteFallbackDecoder(),
                                              t.FuseDecoder()]))
    return tree, False, _unk(conv, "")


def _all_byte_tokens(conv: _Converter) -> bool:
    return all(conv.vocab_has(f"<0x{b:02X}>") for b in range(256))


QWEN2_SPLIT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
               r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
"""transformers 5's ``Qwen2Tokenizer`` pre-split pattern."""

_PIPELINES = {
    "LlamaTokenizer": lambda c, b: _metaspace_class(c, b, unk=False, strip_always=False),
    "CodeLlamaTokenizer": lambda c, b: _metaspace_class(c, b, unk=True, strip_always=True),
    "GemmaTokenizer": _gemma_class,
    "GPT2Tokenizer": lambda c, b: _byte_level_class(c, b, nfc=False, split=None),
    "GPTNeoXTokenizer": lambda c, b: _byte_level_class(c, b, nfc=True, split=None),
    "Qwen2Tokenizer": lambda c, b: _byte_level_class(c, b, nfc=True, split=QWEN2_SPLIT),
}


def _class_pipeline(name: str):
    build = _PIPELINES[name]

    def pipeline(conv: _Converter, body: t.MtokFile):
        return build(conv, body) if isinstance(body.model, t.BPEModel) else None
    return pipeline


CLASS_PIPELINES = {name: _class_pipeline(name) for name in _PIPELINES}
"""transformers 5 classes whose ``__init__`` builds the pipeline (from the file's vocabulary and
merges) that encode runs, as ``(mtokspec tree, prefix space, unknown token)`` (rules S6-S8); a BPE
vocabulary is needed; other classes run the file's pipeline."""


def _metaspace_prepends_as_stored(pt: Any) -> bool:
    """Whether every Metaspace in ``pt`` prepends to one word exactly when its stored
    ``add_prefix_space`` says so (``prepend_scheme`` "first" acts as "always" there)."""
    if not isinstance(pt, dict):
        return True
    if pt.get("type") == "Sequence":
        children = pt.get("pretokenizers")
        return all(map(_metaspace_prepends_as_stored, children)) if isinstance(children, list) else False
    if pt.get("type") != "Metaspace":
        return True
    scheme, aps = pt.get("prepend_scheme"), pt.get("add_prefix_space", True)
    return scheme is None or (scheme in ("always", "first")) == bool(aps)

