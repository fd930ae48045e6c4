"""A steward that starts in a room where a dead steward left a one-shot session running:
the session's previews are withdrawn and browsers get its final status (real LiveKit +
Postgres). The SIGKILL itself is exercised by the fault suite."""

from __future__ import annotations

import asyncio

import pytest

from steward.protocol.messages import ActionEnvelope
from steward.room.runs.sessions import INTERRUPTED
from steward.store.database import Database
from steward.store.outbox import Outbox
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.fixed_script import flow_chart
from tests.support.room import close_all, fixed_script_steward, join_clients

pytestmark = pytest.mark.integration


async def _leave_running(outbox: Outbox, room: str, sid: str, fairy: str | None) -> int:
    """What a killed steward leaves: the session row still running and envelopes up to
    a partial preview; returns the last seq written."""
    await outbox.start_session(
        session_id=sid, room_id=room, source="browser", requester="alice", model="x", fairy_id=fairy
    )
    steps = flow_chart(sid)[:3]  # box 0's text streaming in: partial versions only
    order = await outbox.max_room_order(room)
    for seq, (actions, partial) in enumerate(steps, start=1):
        assert partial
        env = ActionEnvelope(session_id=sid, seq=seq, partial=True, actions=actions, ts=1.0)
        await outbox.append(room, sid, seq, order + seq, True, env.to_wire().decode())
    return len(steps)


async def test_restarted_steward_ends_the_session_a_dead_one_left_running(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    outbox = Outbox(database.stream_pool)
    await outbox.ensure_room(room_name, "relay")
    dead, fairy = "s-dead-one-shot", "s-dead-fairy"
    last = await _leave_running(outbox, room_name, dead, None)
    fairy_last = await _leave_running(outbox, room_name, fairy, "fairy-1")
    # The browsers are in the room before the steward comes back, as after a crash.
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"])
    try:
        async with fixed_script_steward(livekit_server, database, http=False) as steward:
            runtime = await steward.join(room_name)
            for c in clients:
                assert await c.wait_status(dead, timeout=20) == "error"
            await wait_for(
                lambda: all(
                    c.applied_seq(dead) == last + 1 and c.applied_seq(fairy) == fairy_last
                    for c in clients
                )
            )
            assert all(c.announced_last_seq(dead) == last + 1 for c in clients)
            # The preview box is gone everywhere; the fairy's (it resumes itself) is not.
            box = f"{dead}-box0"
            assert box not in runtime.mirror.shapes
            assert all(box not in c.shapes for c in clients)
            assert all(f"{fairy}-box0" in c.shapes for c in clients)
            assert clients[0].shapes == clients[1].shapes == runtime.mirror.shapes
            # Browsers get the status before the row is written: poll the row briefly.
            for _ in range(100):
                row = await database.pool.fetchrow(
                    "SELECT status, outcome FROM agent_sessions WHERE session_id = $1", dead
                )
                if row["status"] != "running":
                    break
                await asyncio.sleep(0.05)
            assert (row["status"], row["outcome"]) == ("error", INTERRUPTED)
            status = await database.pool.fetchval(
                "SELECT status FROM agent_sessions WHERE session_id = $1", fairy
            )
            assert status == "running"
            # A browser that asks for a full resync (as one does when it sees the steward
            # come back) gets the status again.
            late = HeadlessClient.create(
                livekit_server.url,
                livekit_server.api_key,
                livekit_server.api_secret,
                room=room_name,
                identity="carol",
            )
            clients.append(late)
            await late.connect()
            # Once the steward knows carol (a packet before that has no known sender).
            await wait_for(lambda: runtime.participants.get("carol") is not None)
            await late.request_room_resync(fresh=False)
            assert await late.wait_status(dead, timeout=20) == "error"
            # Once: a second start of the room finds nothing left to end.
            assert await outbox.interrupted_sessions(room_name) == []
    finally:
        await close_all(clients)
