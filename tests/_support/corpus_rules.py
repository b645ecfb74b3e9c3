"""What the divergences wing says of the corpus files (shared by the corpus and lint tests)."""

from __future__ import annotations

__all__ = ["EXPECTED_RULES"]

# The rules each corpus file's differences come from (a change in MNN's model or in the explanation
# shows up here)
EXPECTED_RULES = {
    ("bert-base-cased-derived", "mnn.mtok"): {"mnn-stream-decode", "mnn-decode-skips-special", "mnn-decoder-chain",
                                             "mnn-wordpiece-cleanup"},
    ("bert-base-cased-derived", "mnn.txt"): {"mnn-legacy-bert"},
    ("phi-3-mini", "mnn.mtok"): {"mnn-stream-decode", "mnn-decode-skips-special"},
    ("roberta-base", "mnn.mtok"): set(),
    ("roberta-base", "mnn.txt"): {"mnn-legacy-gpt2-regex"},
    ("t5-small", "mnn.mtok"): {"mnn-stream-decode", "mnn-decode-skips-special", "mnn-clean-up-spaces",
                              "mnn-table-normalizer", "mnn-unigram-bytes"},
    ("t5-small", "mnn.txt"): {"mnn-legacy-sentencepiece"},
    ("tokenizer-wiki", "mnn.mtok"): {"mnn-decode-raw-bytes"},
    ("whisper.tiny", "mnn.mtok"): {"mnn-post-misread", "mnn-clean-up-spaces", "mnn-decode-skips-special"},
    ("whisper.tiny", "mnn.txt"): {"mnn-legacy-tiktoken-greedy"},
}
