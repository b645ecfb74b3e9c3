"""upgrade: a legacy ``tokenizer.txt`` (types 0-3) to an equivalent ``.mtok``."""

from __future__ import annotations

import argparse
import sys

import mtokspec
from mtokspec.cli._io import one_line, read_tokenizer_file
from mtokspec.errors import MtokFormatError

_EPILOG = """\
what each type becomes (everything the file cannot hold is listed as a loss):
  type 0 SENTENCEPIECE  SentencePiece BPE by piece score (or --sp-model unigram), byte fallback
  type 1 TIKTOKEN       byte-level BPE with merges derived from the ranks, split by --split-pattern
  type 2 BERT           WordPiece with BertNormalizer (cased unless --lowercase) and BertPreTokenizer
  type 3 HUGGINGFACE    GPT-2 byte-level BPE from the tokens and merge lines

exit codes: 0 written; 1 --strict and the upgrade would lose information (nothing written);
2 the input could not be read, parsed or upgraded, the result has an error-level validate finding
(nothing written; --force writes it), or the output could not be written."""


def cmd_upgrade(args) -> int:
    from mtokspec.cli.convert import write_conversion
    from mtokspec.convert.upgrade import LEGACY_TYPES, upgrade

    try:
        src = mtokspec.parse(read_tokenizer_file(args.file, stdin=True))
    except (OSError, MtokFormatError) as e:
        print(f"mtokspec upgrade: {args.file}: {one_line(e)}", file=sys.stderr)
        return 2
    if type(src) not in LEGACY_TYPES:
        print(f"mtokspec upgrade: {args.file}: already a .mtok file (upgrade reads legacy tokenizer.txt "
              "files, types 0-3)", file=sys.stderr)
        return 2
    legacy_type = LEGACY_TYPES[type(src)]
    return write_conversion(
        "upgrade", args.file, args.output, args.report,
        lambda: upgrade(src, split_pattern=args.split_pattern, lowercase=args.lowercase,
                        sentencepiece_model=args.sp_model, sentencepiece_normalization=args.sp_normalization,
                        strict=args.strict),
        what=f" from a type-{legacy_type} tokenizer.txt", inputs=[args.file], force=args.force,
        legacy_type=legacy_type)


def register(subparsers) -> None:
    from mtokspec.cli._checked import add_force
    from mtokspec.runtime.shared.text import GPT2_PATTERN

    p = subparsers.add_parser(
        "upgrade",
        help="upgrade a legacy tokenizer.txt (types 0-3) to an equivalent .mtok",
        description=(
            "Rebuild the tokenizer a legacy tokenizer.txt was exported from as a .mtok file, which\n"
            "mtokspec's runtime and `mtokspec export-hf` can then run. The legacy file lacks parts\n"
            "of the original (split pattern, normalisation, added-token flags, post-processor...):\n"
            "the options below choose them, and a loss report on stderr lists every assumption."),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="tokenizer.txt", help="the legacy file ('-' for stdin)")
    p.add_argument("-o", "--output", required=True, metavar="tokenizer.mtok",
                   help="where to write the .mtok (atomically: nothing is left behind on failure)")
    p.add_argument("--split-pattern", default=GPT2_PATTERN, metavar="P",
                   help="type 1: the regular expression that splits text before byte-level BPE "
                        "(default: GPT-2's, %(default)s)")
    p.add_argument("--lowercase", action="store_true",
                   help="type 2: the model lower-cases and strips accents (BERT uncased; default cased)")
    p.add_argument("--sp-model", choices=("bpe", "unigram"), default="bpe",
                   help="type 0: SentencePiece algorithm (default: %(default)s, what MNN runs)")
    p.add_argument("--sp-normalization", choices=("identity", "nmt_nfkc"), default="identity",
                   help="type 0: 'identity' escapes every space (Llama); 'nmt_nfkc' applies NFKC and "
                        "collapses white space (T5) (default: %(default)s)")
    p.add_argument("--strict", action="store_true",
                   help="fail (exit 1, nothing written) when the upgrade would lose anything")
    p.add_argument("--report", choices=("text", "json"), default="text",
                   help="format of the loss report printed to stderr (default: %(default)s)")
    add_force(p)
    p.set_defaults(func=cmd_upgrade)
