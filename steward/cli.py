"""`steward` console command: the composition root's entry point.

Each subcommand lives in `steward/commands/<name>.py` and exposes `register(subparsers)`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from steward.native_exit import exit_skipping_native_teardown

# Modules under steward.commands, in the order `--help` lists them.
COMMANDS = (
    "dev",
    "join",
    "worker",
    "demo",
    "rooms",
    "db",
    "protocol",
    "livekit",
    "bench",
    "by_hand",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="steward",
        description="Canvas Steward: AI fairies on a shared tldraw canvas over LiveKit.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"steward.commands.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"steward.commands.{name}":
                raise
            continue  # command not built yet
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        return 130


def run() -> None:
    """Console entry point. Commands stop their own servers before returning; after that,
    skip livekit's native teardown at interpreter exit, which can panic and abort."""
    code = main()
    exit_skipping_native_teardown(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
