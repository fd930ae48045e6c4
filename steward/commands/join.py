"""`steward join ROOM`: connect to rooms directly (dev/test mode) and serve until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import Any

from steward.commands.setup import setup
from steward.service import StewardService


async def _join(args: argparse.Namespace) -> int:
    settings = setup()
    service = StewardService(settings)
    await service.start(http=not args.no_http)
    stop = asyncio.Event()
    drain = False  # SIGTERM drains (a deploy); Ctrl-C stops at once (a developer)

    def on_term() -> None:
        nonlocal drain
        drain = True
        stop.set()

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    loop.add_signal_handler(signal.SIGTERM, on_term)
    try:
        for room in args.rooms:
            await service.join(room)
        print(
            f"steward serving {', '.join(args.rooms)} on {settings.livekit_url}"
            + (f"; HTTP on port {service.http_port}" if service.http_port else "")
            + "; Ctrl-C stops",
            flush=True,
        )
        await stop.wait()
    finally:
        if drain:
            await service.drain(settings.steward_drain_seconds)
        else:
            await service.close()
    return 0


def _run(args: argparse.Namespace) -> int:
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_join(args))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("join", help="join rooms directly as the steward (dev/test mode)")
    p.add_argument("rooms", nargs="+", metavar="ROOM")
    p.add_argument("--no-http", action="store_true", help="do not start the HTTP API")
    p.set_defaults(handler=_run)
