"""What both semantics of the runtime share: stage registries, per-call bounds, text facts (the argument checks are :mod:`mtokspec.args`)."""
