"""Chromium tabs on the demo page for integration tests: the tab driver
(`client-bridge/bench/tabs.mjs`) serving one or more tabs in a room, and its commands
(`pan`, `prompt`, `shot`, ...), each bounded in time."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from steward.config import PROJECT_ROOT
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.support.room import room_settings

BRIDGE = PROJECT_ROOT / "client-bridge"
TABS = BRIDGE / "bench" / "tabs.mjs"
DIST = BRIDGE / "demo" / "dist"
NODE = PROJECT_ROOT / ".tools" / "node" / "bin" / "node"

Tabs = Callable[..., Awaitable[dict[str, Any]]]


def check_browser_rig() -> None:
    """The demo page is built and node and Chromium are there (`make test` builds the page)."""
    assert (DIST / "index.html").exists(), (
        "build the demo page: npm --prefix client-bridge run build"
    )
    assert NODE.exists() and shutil.which(os.environ.get("CHROMIUM", "/usr/bin/chromium"))


async def tab_command(*args: str, socket: Path) -> dict[str, Any]:
    """One command of the tab driver (`pan alice 100 200`, …): its JSON reply."""
    proc = await asyncio.create_subprocess_exec(
        str(NODE),
        str(TABS),
        *args,
        "--socket",
        str(socket),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    reply: dict[str, Any] = json.loads(out)
    return reply


@asynccontextmanager
async def chromium_tabs(page: str, room: str, tabs: list[str], out: Path) -> AsyncIterator[Tabs]:
    """The tab driver serving `tabs` (`alice:1280x800`, …) of `page` in `room`, ready; yields
    its command function; stops it (bounded) on the way out."""
    socket = out / "tabs.sock"
    args = [a for tab in tabs for a in ("--tab", tab)]
    proc = await asyncio.create_subprocess_exec(
        str(NODE),
        str(TABS),
        "serve",
        "--page",
        page,
        "--room",
        room,
        *args,
        "--socket",
        str(socket),
        "--out",
        str(out),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:

        async def ready() -> None:
            assert proc.stdout is not None
            while line := await proc.stdout.readline():
                if b'"ready":true' in line:
                    return
            raise AssertionError("the tabs driver exited before it was ready")

        await asyncio.wait_for(ready(), 90)

        async def command(*cmd: str) -> dict[str, Any]:
            return await tab_command(*cmd, socket=socket)

        yield command
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await asyncio.wait_for(proc.wait(), 10)


@asynccontextmanager
async def served_tabs(
    livekit_server: LiveKitServer,
    database: Database,
    room: str,
    *,
    model: str,
    model_url: str,
    tabs: list[str],
    out: Path,
    **settings: Any,
) -> AsyncIterator[tuple[StewardService, RoomRuntime, Tabs]]:
    """A steward serving the demo page (the `anthropic:` provider at `model_url`), in `room`,
    with Chromium `tabs` on that page: (service, the room's runtime, tab commands)."""
    check_browser_rig()
    config = room_settings(
        livekit_server,
        database.url,
        steward_model=model,
        anthropic_base_url=model_url,
        steward_context_timeout_s=4.0,
        steward_http_port=0,
        steward_dev_tokens=True,
        steward_demo_dir=DIST,
        **settings,
    )
    service = StewardService(config, database=database)
    await service.start(http=True)
    try:
        runtime = await service.join(room)
        page = f"http://127.0.0.1:{service.http_port}"
        async with chromium_tabs(page, room, tabs, out) as command:
            yield service, runtime, command
    finally:
        await service.close()
