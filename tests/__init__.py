"""The test suite: one folder per wing of the package; shared helpers in ``_support``."""
