"""Prompt grants and cancel rights in a real room (real livekit-server + Postgres)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web
from structlog.testing import capture_logs

from steward.access import prompt_grant
from steward.protocol.names import ATTR_CAN_PROMPT
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.anthropic_server import MessagesServer
from steward_tools.rigs.request_text import read_request
from steward_tools.rigs.responders import PlanResponder
from tests.conftest import wait_for
from tests.support.room import (
    close_all,
    join_clients,
    paced_steward,
    room_settings,
)

pytestmark = pytest.mark.integration


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    async with paced_steward(livekit_server, database, step_delay_s=0.25) as service:
        yield service


async def _attribute_seen(steward: StewardService, room: str, identity: str, value: str) -> None:
    runtime = steward.rooms[room]
    await wait_for(
        lambda: (
            (m := runtime.participants.get(identity)) is not None
            and m.attributes.get(ATTR_CAN_PROMPT) == value
        )
    )


async def test_an_old_grant_set_again_on_a_new_connection_is_refused(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    (ann,) = await join_clients(livekit_server, room_name, ["ann"], runtime)
    old = ann.room.local_participant.attributes[ATTR_CAN_PROMPT]
    ok = await ann.prompt("draw our signup flow")
    assert ok.session_id and await ann.wait_status(ok.session_id) == "done"
    await runtime.grants.flush()
    await ann.disconnect()
    # Her new token carries no grant; she sets the old value herself.
    (again,) = await join_clients(livekit_server, room_name, ["ann"], runtime, can_prompt=False)
    try:
        with capture_logs() as logs:
            await again.room.local_participant.set_attributes({ATTR_CAN_PROMPT: old})
            await _attribute_seen(steward, room_name, "ann", old)
            reply = await again.prompt("draw our signup flow")
        assert reply.session_id is None and reply.error == "not allowed to prompt in this room"
        assert any(e["event"] == "grant_rebound_refused" for e in logs)
    finally:
        await close_all([again])


async def test_grants_across_rooms_expired_or_ambiguous_are_refused(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    room = room_name + ":x"
    runtime = await steward.join(room)
    secret = livekit_server.api_secret
    (mallory,) = await join_clients(livekit_server, room, ["mallory"], runtime, can_prompt=False)
    try:
        exp = int(time.time()) + 600
        forged = [
            # v1 joined room and identity with ':': (room, "x:mallory") == (room + ":x", "mallory")
            prompt_grant(secret, room=room_name, identity="x:mallory", expires_at=exp),
            prompt_grant(secret, room=room, identity="mallory", expires_at=int(time.time()) - 1),
            prompt_grant(secret, room=room_name, identity="mallory", expires_at=exp),
            prompt_grant("another-secret" * 3, room=room, identity="mallory", expires_at=exp),
        ]
        for value in forged:
            await mallory.room.local_participant.set_attributes({ATTR_CAN_PROMPT: value})
            await _attribute_seen(steward, room, "mallory", value)
            reply = await mallory.prompt("draw our signup flow")
            assert reply.error == "not allowed to prompt in this room", value
        assert runtime.sessions.sessions == {}
        # The genuine article for this room works (a control: the checks can pass).
        good = prompt_grant(secret, room=room, identity="mallory", expires_at=exp)
        await mallory.room.local_participant.set_attributes({ATTR_CAN_PROMPT: good})
        await _attribute_seen(steward, room, "mallory", good)
        reply = await mallory.prompt("draw our signup flow")
        assert reply.session_id and await mallory.wait_status(reply.session_id) == "done"
    finally:
        await close_all([mallory])


async def _running(client: HeadlessClient, steward: StewardService, room: str) -> str:
    reply = await client.prompt("draw our signup flow")
    assert reply.session_id
    runtime = steward.rooms[room]
    await wait_for(lambda: runtime.broadcaster.stats(reply.session_id or "").last_seq >= 1)
    return reply.session_id


async def test_only_the_asker_or_a_moderator_cancels_a_run(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    ann, bob = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
    (mod,) = await join_clients(livekit_server, room_name, ["mod"], runtime, moderator=True)
    try:
        with capture_logs() as logs:
            first = await _running(ann, steward, room_name)
            refused = await bob.cancel(first)
            assert not refused.ok and refused.error and "moderator" in refused.error
            assert runtime.sessions.active == 1
            own = await ann.cancel(first)
            assert own.ok and await bob.wait_status(first) == "canceled"
            second = await _running(ann, steward, room_name)
            by_mod = await mod.cancel(second)
            assert by_mod.ok and await bob.wait_status(second) == "canceled"
        cancels = [e for e in logs if e["event"] == "session_cancel"]
        assert [(e["by"], e["owner"]) for e in cancels] == [("ann", "ann"), ("mod", "ann")]
        refusals = [e for e in logs if e["event"] == "session_cancel_refused"]
        assert [(e["by"], e["owner"]) for e in refusals] == [("bob", "ann")]
    finally:
        await close_all([ann, bob, mod])


async def test_cancel_policy_everyone(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    async with paced_steward(
        livekit_server, database, step_delay_s=0.25, steward_cancel_policy="everyone"
    ) as service:
        runtime = await service.join(room_name)
        ann, bob = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
        (eve,) = await join_clients(livekit_server, room_name, ["eve"], runtime, can_prompt=False)
        try:
            sid = await _running(ann, service, room_name)
            assert not (await eve.cancel(sid)).ok  # no prompt rights: no cancel either
            assert (await bob.cancel(sid)).ok
            assert await ann.wait_status(sid) == "canceled"
        finally:
            await close_all([ann, bob, eve])


@dataclass
class DroneGate(MessagesServer):
    """The Messages server, holding every drone's model request until `gate` is set, so the
    project's drone sessions stay open while the test cancels them."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if read_request(await request.json()).mode == "working-drone":
            await self.gate.wait()
        return await super().handle(request)


async def test_a_projects_sessions_belong_to_who_started_it(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    model = DroneGate(responder=PlanResponder(seed=7))
    await model.start()
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-fairy-test",
        anthropic_base_url=model.base_url,
        steward_context_timeout_s=2.0,
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    fairies = service.fairies
    assert fairies is not None
    clients: list[HeadlessClient] = []
    try:
        runtime = await service.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
        clients += await join_clients(livekit_server, room_name, ["mod"], runtime, moderator=True)
        ann, bob, mod = clients

        def drone_sessions() -> list[str]:
            room = fairies.rooms.get(room_name)
            if room is None:
                return []
            return sorted(
                f.session.session_id for f in room.fairies.values() if f.session and not f.lent
            )

        with capture_logs() as logs:
            reply = await ann.prompt("project: draw our team as boxes side by side")
            assert reply.session_id, reply.error
            await wait_for(lambda: bool(drone_sessions()), timeout=60)
            drone = drone_sessions()[0]
            refused = await bob.cancel(drone)
            assert not refused.ok and refused.error and "moderator" in refused.error
            assert drone in drone_sessions()
            assert (await mod.cancel(drone)).ok
        cancels = [e for e in logs if e["event"] == "session_cancel"]
        assert [(e["by"], e["owner"], e["session_id"]) for e in cancels] == [("mod", "ann", drone)]
        refusals = [e for e in logs if e["event"] == "session_cancel_refused"]
        assert [(e["by"], e["owner"]) for e in refusals] == [("bob", "ann")]
    finally:
        model.gate.set()
        await close_all(clients)
        await service.close()
        await model.stop()
