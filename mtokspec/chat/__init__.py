"""The chat wing: rendering chat templates and linting them for MNN.

:mod:`~mtokspec.chat.render` renders as ``transformers`` does (sandboxed and bounded);
:mod:`~mtokspec.chat.lint` finds the constructs MNN's Jinja engine renders differently.
"""
