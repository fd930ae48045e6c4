"""Graceful drain of a real `steward join` process: SIGTERM lets the running session finish
within STEWARD_DRAIN_SECONDS, cuts it at that bound otherwise, and releases the room's lease
so another steward takes the room at once."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from steward.store.database import Database
from steward.store.leases import RoomLeases
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.room import (
    close_all,
    join_clients,
    prompt_until_accepted,
    spawn_join,
)

pytestmark = pytest.mark.integration

PROMPT = "draw a flow chart of signup with six steps"


async def _drain_once(
    server: LiveKitServer, database: Database, room: str, log: Path, *, drain_s: str
) -> tuple[str, float, int]:
    """SIGTERM mid-session; the client's final status, seconds to exit, exit code."""
    proc = spawn_join(
        server,
        database.url,
        room,
        log,
        STEWARD_SCRIPTED_TOKENS_PER_S="60",
        STEWARD_DRAIN_SECONDS=drain_s,
        STEWARD_LEASE_SECONDS="30",  # long: only a release frees the room at once
    )
    clients: list[HeadlessClient] = []
    try:
        await wait_for(lambda: "steward serving" in log.read_text(errors="replace"), 60)
        clients = await join_clients(server, room, ["alice"])
        await wait_for(lambda: "canvas-steward" in clients[0].room.remote_participants)
        sid = await prompt_until_accepted(clients[0], PROMPT)
        await wait_for(lambda: clients[0].applied_seq(sid) >= 2, timeout=30)
        os.killpg(proc.pid, signal.SIGTERM)
        sent = time.monotonic()
        status = await clients[0].wait_status(sid, timeout=60)
        code = await asyncio.to_thread(proc.wait, 60)
        return status, time.monotonic() - sent, code
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        await close_all(clients)


async def _taken_at_once(database: Database, room: str) -> None:
    """Released, not expired (the lease is 30 s): another steward takes the room at once."""
    lease = await RoomLeases(database.pool, "next", ttl_s=5).acquire(room)
    assert lease.token == 2


async def test_sigterm_lets_the_session_finish_then_releases_the_room(
    livekit_server: LiveKitServer, database: Database, room_name: str, tmp_path: Path
) -> None:
    log = tmp_path / "steward.log"
    status, _, code = await _drain_once(livekit_server, database, room_name, log, drain_s="60")
    assert (status, code) == ("done", 0)
    text = log.read_text(errors="replace")
    assert '"sessions": 1' in text and '"unfinished": 0' in text and "lease_released" in text
    await _taken_at_once(database, room_name)


async def test_sigterm_cuts_sessions_at_the_drain_bound(
    livekit_server: LiveKitServer, database: Database, room_name: str, tmp_path: Path
) -> None:
    log = tmp_path / "steward.log"
    status, took, code = await _drain_once(livekit_server, database, room_name, log, drain_s="1")
    assert (status, code) == ("canceled", 0)
    assert took < 10.0, took  # the session alone runs longer than that
    assert '"unfinished": 1' in log.read_text(errors="replace")
    await _taken_at_once(database, room_name)
