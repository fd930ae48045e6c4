"""`steward bench <name> [--json]`: the front of the benchmarks in `steward_tools.bench`.

The benches (and their dev-only dependencies such as hypothesis) are imported only when this
command runs, so every other command, the worker included, never loads the tooling.
"""

from __future__ import annotations

import argparse
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from steward_tools.bench.command import main

    return main((["--help"] if args.bench_help else []) + args.argv)


def register(sub: Any) -> None:
    # The bench parser is built by the tooling; this one hands it every argument unread.
    p = sub.add_parser("bench", help="run a benchmark and print one JSON object", add_help=False)
    p.add_argument("-h", "--help", action="store_true", dest="bench_help")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p.set_defaults(handler=_run)
