"""chat: render a conversation with the file's chat template (as transformers or as MNN does); compare --chat:
the two prompts side by side."""

from __future__ import annotations

import argparse
import sys

from mtokspec.cli._io import one_line, read_input, read_tokenizer_file
from mtokspec.errors import MtokFormatError
from mtokspec.names import DEVICES, SEMANTICS


def cmd_chat(args) -> int:
    from mtokspec.errors import ChatTemplateError
    from mtokspec.errors import TokenizerError
    from mtokspec.format import plainio
    from mtokspec.tokenizer import Tokenizer

    try:
        tok = Tokenizer.from_bytes(read_tokenizer_file(args.file, stdin=True), semantics=args.runtime)
    except (OSError, MtokFormatError, TokenizerError) as e:
        print(f"mtokspec: {args.file}: {one_line(e)}", file=sys.stderr)
        return 2
    try:
        messages = plainio.load_json(read_input(args.messages).decode("utf-8"))
    except (OSError, UnicodeDecodeError, MtokFormatError, RecursionError) as e:
        print(f"mtokspec: {args.messages}: {one_line(e)}", file=sys.stderr)
        return 2
    where = plainio.find_oversize(messages)
    if where is not None:
        print(f"mtokspec: {args.messages}: {where}: an integer of more than {plainio.MAX_DIGITS} digits",
              file=sys.stderr)
        return 2
    if isinstance(messages, dict) and "messages" in messages:
        messages = messages["messages"]
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        print(f"mtokspec: {args.messages}: expected a JSON list of messages ({{'role': ..., 'content': ...}})",
              file=sys.stderr)
        return 2
    template = None
    if args.template:
        try:
            template = read_input(args.template).decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            print(f"mtokspec: {args.template}: {one_line(e)}", file=sys.stderr)
            return 2
    elif not tok.chat_template:
        print(f"mtokspec: {args.file}: the file has no chat template: give one with --template FILE (a Jinja "
              f"file), or embed it: mtokspec set {args.file} --chat-template FILE -o OUT", file=sys.stderr)
        return 2
    agp = not args.no_generation_prompt
    raised = None
    try:
        prompt = tok.apply_chat_template(messages, add_generation_prompt=agp, template=template)
        if args.runtime in DEVICES:  # a rewritten template's marker where transformers raises (chat-mnn.md)
            from mtokspec.chat.rewrite import device_raise

            raised = device_raise(template if template is not None else tok.chat_template, prompt,
                                  lambda t: tok.apply_chat_template(messages, add_generation_prompt=agp, template=t))
    except ChatTemplateError as e:
        print(f"mtokspec: chat template: {one_line(e)}", file=sys.stderr)
        return 1
    sys.stdout.write(prompt)
    if args.tokens:  # hf: as apply_chat_template(tokenize=True); mnn: Llm::response's tokenizer_encode
        ids = tok.encode(prompt, add_special_tokens=args.runtime in DEVICES)
        sys.stdout.write("\n" + " ".join(map(str, ids)) + "\n")
    if raised is not None:
        print(f"mtokspec: chat template: raise_exception({one_line(raised)}) reached: transformers raises here; "
              "the device renders the marker printed above", file=sys.stderr)
        return 1
    return 0


def cmd_compare_chat(args) -> int:
    """``mtokspec compare FILE --chat conversations.json``."""
    from mtokspec.chat.compare import compare_chat, format_comparison, load_conversations
    from mtokspec.errors import TokenizerError
    from mtokspec.format import plainio
    from mtokspec.tokenizer import Tokenizer

    try:
        tok = Tokenizer.from_bytes(read_tokenizer_file(args.file, stdin=True), semantics="mnn")
    except (OSError, MtokFormatError, TokenizerError) as e:
        print(f"mtokspec: {args.file}: {one_line(e)}", file=sys.stderr)
        return 2
    if not tok.chat_template:
        print(f"mtokspec: {args.file}: the file has no chat template", file=sys.stderr)
        return 2
    try:
        conversations = load_conversations(plainio.load_json(read_input(args.chat).decode("utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, MtokFormatError, RecursionError) as e:
        print(f"mtokspec: {args.chat}: {one_line(e)}", file=sys.stderr)
        return 2
    results = compare_chat(tok.chat_template, conversations, bos_token=tok.bos_token, eos_token=tok.eos_token,
                           add_generation_prompt=not args.no_generation_prompt)
    if args.json:
        sys.stdout.write(plainio.dump_json([r.to_dict() for r in results]))
    else:
        for r in results:
            sys.stdout.write(format_comparison(r))
        same = sum(r.same for r in results)
        print(f"{same}/{len(results)} conversations: the device prompt is transformers' prompt")
    return 0 if all(r.same for r in results) else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "chat", help="render a conversation with the file's chat template",
        description="Render MESSAGES (a JSON list of {role, content}, or an object with a 'messages' key) "
                    "with the chat template embedded in FILE, exactly as transformers renders it "
                    "(sandboxed: unsafe templates are refused, time and output size are bounded), or "
                    "with --runtime mnn exactly as MNN's engine renders it on a device. "
                    "Exit 1 when the template raises or is refused (with --runtime mnn: when a template "
                    "rewritten for MNN renders its raise marker, which is printed); 2 when FILE has no "
                    "template and --template gives none.",
    )
    p.add_argument("file", help="the .mtok file")
    p.add_argument("--messages", required=True, metavar="conversation.json", help="the messages ('-' for stdin)")
    p.add_argument("--no-generation-prompt", action="store_true",
                   help="do not end with the assistant prompt (add_generation_prompt=False)")
    p.add_argument("--tokens", action="store_true",
                   help="also print the prompt's ids: hf, encoded without special tokens (as transformers' "
                        "apply_chat_template(tokenize=True)); mnn, MNN's encode(prompt), the ids a device feeds "
                        "the model (the file's prefix ids and post-processor included, as Llm::response)")
    p.add_argument("--template", metavar="FILE", help="use this template instead of the file's")
    p.add_argument("--runtime", choices=SEMANTICS, default="hf",
                   help="hf: render as transformers does (default); mnn: the prompt a device builds, "
                        "rendered as MNN's own Jinja engine does (exit 1 where MNN would never return); "
                        "mnn@VERSION: as that released version")
    p.set_defaults(func=cmd_chat)
