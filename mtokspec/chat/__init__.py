"""The chat wing: rendering chat templates (transformers' semantics and MNN's engine), linting
them for MNN, rewriting them so that MNN renders them as transformers does."""
