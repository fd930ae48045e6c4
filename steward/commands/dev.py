"""`steward dev`: the whole dev stack in one process tree; Ctrl-C stops all of it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING, Any

from steward.commands.setup import setup
from steward.config import PROJECT_ROOT, Settings
from steward.service import StewardService
from steward.store.database import open_database

if TYPE_CHECKING:  # imported inside the command, never by the runtime
    from steward_tools.livekit_server import LiveKitServer


async def _dev(args: argparse.Namespace) -> int:
    from steward_tools.livekit_server import LiveKitServer

    settings = setup()
    server = LiveKitServer(http_port=args.livekit_port)
    await server.astart()
    demo_dir = PROJECT_ROOT / "client-bridge" / "demo" / "dist"
    settings = settings.model_copy(
        update={"livekit_url": server.url, "steward_dev_tokens": True, "steward_demo_dir": demo_dir}
    )
    db = await open_database(settings)
    service = StewardService(settings, database=db)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await service.start(http=True)
        for room in args.rooms:
            await service.join(room)
        _print_banner(settings, server, db.url, service, args.rooms)
        await stop.wait()
    finally:
        print("\nstopping dev stack...", flush=True)
        await service.close()
        await db.close()
        server.stop()
    return 0


def _print_banner(
    settings: Settings,
    server: LiveKitServer,
    db_url: str,
    service: StewardService,
    rooms: list[str],
) -> None:
    http = f"http://{settings.steward_http_host}:{service.http_port}"
    lines = [
        "Canvas Steward dev stack is up:",
        f"  LiveKit     {server.url}  (api key {server.api_key})",
        f"  Postgres    {db_url}",
        f"  model       {settings.steward_model}",
        f"  steward     serving room(s) {', '.join(rooms)} as {settings.steward_identity!r}"
        " (other rooms: `steward join ROOM`)",
        f"  HTTP API    {http}/healthz, {http}/metrics, POST {http}/api/canvas-agent/run"
        + ("" if settings.steward_api_key else " (off: set STEWARD_API_KEY)"),
        (
            f"  demo page   {http}/?room={rooms[0]}  (open it in two or more tabs)"
            if settings.steward_demo_dir and (settings.steward_demo_dir / "index.html").exists()
            else "  demo page   not built: run `npm --prefix client-bridge run build`"
        ),
        "Press Ctrl-C to stop everything.",
    ]
    print("\n".join(lines), flush=True)


def _run(args: argparse.Namespace) -> int:
    args.rooms = args.rooms or ["demo"]
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_dev(args))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("dev", help="run LiveKit, Postgres, the steward and the demo page")
    p.add_argument("--livekit-port", type=int, default=7880)
    p.add_argument(
        "--room", dest="rooms", action="append", default=None, help="room(s) to serve (demo)"
    )
    p.set_defaults(handler=_run)
