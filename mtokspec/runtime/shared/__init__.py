"""What both semantics of the runtime share: stage registries, per-call bounds, argument checks, text facts."""
