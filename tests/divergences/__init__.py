"""The divergences wing (mtokspec/divergences): the rules, the lint, explain."""
