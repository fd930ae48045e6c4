"""`steward by-hand ...`: the front of the model answered by hand (`steward_tools.by_hand`).

The tooling is imported only when this command runs (see `steward bench`)."""

from __future__ import annotations

import argparse
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from steward_tools.by_hand.command import main

    return main((["--help"] if args.by_hand_help else []) + args.argv)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "by-hand", help="a model answered by a person, and demo tabs to drive", add_help=False
    )
    p.add_argument("-h", "--help", action="store_true", dest="by_hand_help")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p.set_defaults(handler=_run)
