"""What both semantics of the runtime share: stage registries and the byte-level alphabet."""
