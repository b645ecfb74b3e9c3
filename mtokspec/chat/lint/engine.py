"""What MNN's Jinja engine has (``tokenizer/jinja.hpp`` at the reference commit)."""

from __future__ import annotations

import re


# ---------------------------------------------------------------------------------------------
# What MNN's engine has (jinja.hpp at the reference commit)
# ---------------------------------------------------------------------------------------------

MNN_FILTERS = {"tojson", "string", "capitalize", "length", "trim", "items", "lower", "upper", "map", "join"}
# Missing filters pass their input through (jinja.hpp:1032).  These differ only for some inputs:
# identity on the values they are usually given; the rest transform almost every input.
PASS_THROUGH_HARMLESS = {"safe"}
PASS_THROUGH_SOMETIMES = {
    "default": "differs when the value is undefined (or a missing key, which MNN reads as '')",
    "d": "differs when the value is undefined (or a missing key, which MNN reads as '')",
    "list": "identity on lists; differs on strings, mappings and ranges",
    "escape": "differs when the text holds < > & ' \"",
    "e": "differs when the text holds < > & ' \"",
    "forceescape": "differs when the text holds < > & ' \"",
    "int": "identity on integers; differs on strings and floats",
    "float": "differs unless the value is already a float",
    "abs": "identity on non-negative numbers",
    "round": "identity on integers",
}
MNN_TESTS = {"defined", "undefined", "none", "boolean", "string", "number", "sequence", "iterable", "mapping",
             "true", "false"}
TESTS_PARTLY = {
    "iterable": "false for mappings (transformers: true)",
    "sequence": "false for mappings (transformers: true)",
    "mapping": "true for undefined values (MNN's undefined is a mapping)",
}
MNN_METHODS = {"startswith", "endswith", "split", "lstrip", "rstrip", "strip", "replace"}
MNN_FUNCTIONS = {"range", "namespace", "strftime_now"}
MNN_LOOP_ATTRS = {"index", "index0", "first", "last", "length"}
# Escapes MNN's read_string knows (jinja.hpp:527-538).
MNN_ESCAPES = set("nrt\\\"'bf")
GLIBC_STRFTIME_FLAG = re.compile(r"%[-_0^#]")
SANDBOX_MAX_RANGE = 100_000
# Special tokens transformers passes to the template and MNN does not (it passes eos_token always,
# bos_token when non-empty).
OTHER_SPECIAL_TOKENS = {"pad_token", "unk_token", "sep_token", "cls_token", "mask_token",
                         "additional_special_tokens"}
# Variables transformers always defines (None / False) that MNN leaves undefined.
CONTEXT_VARS = {"tools": "None", "documents": "None", "add_generation_prompt": "False"}
MESSAGE_KEYS_MNN_PASSES = {"role", "content"}

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}

# Reachability of a place in the template on MNN.  A plain conversation is what MNN's LLM engine
# sends: system/user/assistant messages with string content.
PLAIN, EXTRA, CALLER = 2, 1, 0
CAP = {PLAIN: "error", EXTRA: "warning", CALLER: "info"}
WHERE = {EXTRA: " (only reached by messages other than system/user/assistant with string content)",
          CALLER: " (only reached with tools, documents or other variables of the caller, which MNN "
                  "passes only through the file's chat_template_context)"}
PLAIN_ROLES = {"system", "user", "assistant"}
# Names MNN's caller defines (jinja.hpp:2098-2150, tokenizer.cpp:1027-1054) or transformers always
# passes; any other free name is the caller's business (undefined unless passed).
KNOWN_NAMES = {"messages", "eos_token", "bos_token", "add_generation_prompt", "tools", "documents",
                "raise_exception", "strftime_now", "range", "namespace", "loop"}
# Rules about a value: when the value only goes to a variable or a condition, whether the output
# changes depends on the data, so they are warnings there.
VALUE_RULES = {"mnn-jinja-unparsed-operator", "mnn-jinja-condexpr-no-else", "mnn-jinja-loop-attribute",
                "mnn-jinja-unsupported-filter", "mnn-jinja-unsupported-test", "mnn-jinja-unsupported-method",
                "mnn-jinja-method-arguments", "mnn-jinja-string-subscript", "mnn-jinja-unknown-function",
                "mnn-jinja-special-token-undefined", "mnn-jinja-macro-default",
                "mnn-jinja-strftime-flag", "mnn-jinja-print-non-string", "mnn-jinja-undefined-concat"}
