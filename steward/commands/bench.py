"""`steward bench <name> [--json]`: benchmarks, one module each in `steward/bench/<name>.py`.

Each module exposes `register(subparsers)`; modules that do not exist yet are skipped, so
other benchmarks (latency, scale, faults, fuzz) plug in by adding a file and a name below.
Every bench's stdout is its result alone; log lines go to stderr.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from steward.obs.logging import configure_logging

BENCHES = (
    "parse", "prompt", "latency", "scale", "faults", "failover", "fuzz", "abuse", "voice",
    "conformance",
)  # fmt: skip


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("bench", help="run a benchmark and print one JSON object")
    inner = parser.add_subparsers(dest="bench", metavar="BENCH")
    for name in BENCHES:
        try:
            module = importlib.import_module(f"steward.bench.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"steward.bench.{name}":
                raise
            continue
        module.register(inner)
    for bench in inner.choices.values():
        bench.set_defaults(handler=_logging_to_stderr(bench.get_default("handler")))


def _logging_to_stderr(
    handler: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """stdout carries the bench's JSON only: structlog's default logger prints there, so
    route every log line to stderr before the bench starts."""

    def run(args: argparse.Namespace) -> int:
        configure_logging()
        return handler(args)

    return run
