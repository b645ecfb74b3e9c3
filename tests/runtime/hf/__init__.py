"""The hf runtime (mtokspec/runtime/hf) and its compiled cores (mtokspec.speedups)."""
