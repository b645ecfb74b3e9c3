"""The runtimes (mtokspec/runtime): hf/ and mnn/."""
