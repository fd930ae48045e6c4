"""Subcommands of the `steward` CLI, one module each."""
