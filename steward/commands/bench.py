"""`steward bench <name> [--json]`: benchmarks, one module each in `steward/bench/<name>.py`.

Each module exposes `register(subparsers)`; modules that do not exist yet are skipped, so
other benchmarks (latency, scale, faults, fuzz) plug in by adding a file and a name below.
"""

from __future__ import annotations

import argparse
import importlib

BENCHES = ("parse", "prompt", "latency", "scale", "faults", "fuzz", "abuse", "voice", "conformance")


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
