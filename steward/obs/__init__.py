"""Observability: structured logs, redaction, metrics."""
