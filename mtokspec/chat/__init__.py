"""The chat wing: rendering chat templates and linting them for MNN.

:mod:`~mtokspec.chat.render` renders as ``transformers`` does (sandboxed and bounded);
:mod:`~mtokspec.chat.lint` finds the constructs MNN's Jinja engine renders differently;
:mod:`~mtokspec.chat.mnn` renders as MNN's engine does on a device; :mod:`~mtokspec.chat.rewrite`
rewrites a template so that MNN renders it as transformers does; :mod:`~mtokspec.chat.compare`
sets the two prompts side by side.
"""
