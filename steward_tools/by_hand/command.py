"""The parser behind `steward by-hand serve|pending|answer|tabs` (docs/MODEL-BY-HAND.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from steward.obs.logging import configure_logging
from steward_tools.by_hand import parking
from steward_tools.by_hand.server import TRANSCRIPT, HandServer

TABS_DRIVER = Path(__file__).resolve().parents[2] / "client-bridge" / "bench" / "tabs.mjs"
PROJECT_NODE = TABS_DRIVER.parents[2] / ".tools" / "node" / "bin" / "node"


async def _serve(args: argparse.Namespace) -> int:
    server = HandServer(Path(args.dir), timeout_s=args.timeout, host=args.host, port=args.port)
    url = await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(
        f"model by hand on {url}: requests park under {server.root.resolve()}/NNN-<model>/,\n"
        f"  answer each by writing answer.txt there (or `steward by-hand answer FOLDER FILE`);\n"
        f"  transcript: {server.root.resolve() / TRANSCRIPT}\n"
        f"  point the steward at it: ANTHROPIC_BASE_URL={url} STEWARD_MODEL=anthropic:by-hand",
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await server.stop()
    return 0


def _pending(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    folders = parking.pending(root) if root.is_dir() else []
    for folder in folders:
        print(folder)
    if not folders:
        print("nothing waiting", file=sys.stderr)
    return 0


def _answer(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not (folder / "system.txt").exists():
        print(f"{folder} is not a parked request", file=sys.stderr)
        return 2
    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    print(parking.write_answer(folder, text))
    return 0


def _tabs(args: argparse.Namespace) -> int:
    node = str(PROJECT_NODE) if PROJECT_NODE.exists() else "node"
    os.execvp(node, [node, str(TABS_DRIVER), *args.argv])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="steward by-hand",
        description="A model answered by a person: park requests as files, stream answers back.",
    )
    inner = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = inner.add_parser("serve", help="run the Messages API server that parks requests")
    p.add_argument("--dir", default=".data/by-hand", help="where requests park")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait per answer")
    p.set_defaults(handler=lambda a: asyncio.run(_serve(a)))
    p = inner.add_parser("pending", help="list the parked requests still waiting")
    p.add_argument("--dir", default=".data/by-hand")
    p.set_defaults(handler=_pending)
    p = inner.add_parser("answer", help="answer a parked request (atomically)")
    p.add_argument("folder")
    p.add_argument("file", help="the answer text, or - for stdin")
    p.set_defaults(handler=_answer)
    p = inner.add_parser("tabs", help="drive demo-page tabs (client-bridge/bench/tabs.mjs)")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p.set_defaults(handler=_tabs)
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    configure_logging()
    with contextlib.suppress(KeyboardInterrupt):
        return int(args.handler(args))
    return 0
