"""Three tokenizers trained with HF ``tokenizers`` (BPE, WordPiece, Unigram, each with its
post-processor), for the conversion tests: saved as a folder, converted, compared with the original.
"""

from __future__ import annotations

import pytest

pytest.importorskip("tokenizers", reason="HF tokenizers (a test dependency) trains the folders")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

__all__ = ["TRAIN_TEXT", "TRAINERS"]

TRAIN_TEXT = """The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!
How vexingly quick daft zebras jump; the five boxing wizards jump quickly.
Über Größe, naïve café façade -- déjà vu. 東京は日本の首都です。 Привет, мир! 123 4567 89.0
def tokenize(text): return [w for w in text.split() if w]  # code, too: x += 1; y = x ** 2
""" * 3


def _train_bpe() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(TRAIN_TEXT.splitlines(), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    return tok


def _train_wordpiece() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=None)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]"],
                                        show_progress=False)
    tok.train_from_iterator(TRAIN_TEXT.splitlines(), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    return tok


def _train_unigram() -> Tokenizer:
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Metaspace(prepend_scheme="always")])
    tok.decoder = decoders.Metaspace(prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=200, special_tokens=["<unk>", "</s>"], unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(TRAIN_TEXT.splitlines(), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B:1 </s>:1", special_tokens=[("</s>", tok.token_to_id("</s>"))])
    return tok


TRAINERS = {"bpe": _train_bpe, "wordpiece": _train_wordpiece, "unigram": _train_unigram}
