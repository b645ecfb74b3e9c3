"""The command line (mtokspec/cli)."""
