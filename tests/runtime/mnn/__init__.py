"""The mnn runtime (mtokspec/runtime/mnn) against MNN's recorded outputs and its units."""
