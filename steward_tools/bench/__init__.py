"""Benchmarks behind `steward bench`; each module exposes `register(subparsers)`. What they
run against (model servers, participants in their own processes, fuzz inputs) is in `rigs/`."""
