"""The parser behind `steward bench <name> [--json]`: one benchmark per module in this package.

Each bench module exposes `register(subparsers)`; adding a bench means adding its module and
its name below. Every bench's stdout is its result alone; log lines go to stderr.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence

from steward.obs.logging import configure_logging

BENCHES = (
    "parse",
    "prompt",
    "latency",
    "scale",
    "faults",
    "failover",
    "fuzz",
    "abuse",
    "voice",
    "conformance",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="steward bench", description="Run a benchmark and print one JSON object."
    )
    inner = parser.add_subparsers(dest="bench", metavar="BENCH")
    for name in BENCHES:
        importlib.import_module(f"steward_tools.bench.{name}").register(inner)
    for bench in inner.choices.values():
        bench.set_defaults(handler=_logging_to_stderr(bench.get_default("handler")))
    return parser


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


def _logging_to_stderr(
    handler: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """stdout carries the bench's JSON only: structlog's default logger prints there, so
    route every log line to stderr before the bench starts."""

    def run(args: argparse.Namespace) -> int:
        configure_logging()
        return handler(args)

    return run
