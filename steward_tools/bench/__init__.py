"""Benchmarks behind `steward bench`; each module exposes `register(subparsers)`."""
