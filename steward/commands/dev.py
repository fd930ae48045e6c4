"""`steward dev`: the whole dev stack in one process tree; Ctrl-C stops all of it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import Any

from steward.commands._common import setup
from steward.config import Settings
from steward.livekit_server import LiveKitServer
from steward.store.database import open_database


async def _dev(args: argparse.Namespace) -> int:
    settings = setup()
    server = LiveKitServer(http_port=args.livekit_port)
    await server.astart()
    settings = settings.model_copy(update={"livekit_url": server.url})
    db = await open_database(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        _print_banner(settings, server, db.url)
        await stop.wait()
    finally:
        print("\nstopping dev stack...", flush=True)
        await db.close()
        server.stop()
    return 0


def _print_banner(settings: Settings, server: LiveKitServer, db_url: str) -> None:
    lines = [
        "Canvas Steward dev stack is up:",
        f"  LiveKit     {server.url}  (api key {server.api_key})",
        f"  Postgres    {db_url}",
        f"  model       {settings.steward_model}",
        "  steward     not built yet (room runtime: issue 3)",
        "  demo page   not built yet (client-bridge: issue 6)",
        "Press Ctrl-C to stop everything.",
    ]
    print("\n".join(lines), flush=True)


def _run(args: argparse.Namespace) -> int:
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_dev(args))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("dev", help="run LiveKit, Postgres, the steward and the demo page")
    p.add_argument("--livekit-port", type=int, default=7880)
    p.set_defaults(handler=_run)
