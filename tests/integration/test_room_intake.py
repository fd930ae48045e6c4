"""Prompt intake, permissions, bad input, and the HTTP API (real LiveKit + Postgres)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from steward.protocol.names import TOPIC_ACK, TOPIC_EDIT, TOPIC_RESYNC
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.room import (
    TEST_API_KEY,
    close_all,
    fixed_script_steward,
    join_clients,
    settle,
)

pytestmark = pytest.mark.integration


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    async with fixed_script_steward(livekit_server, database, http=True) as service:
        yield service


async def test_participant_without_permission_cannot_prompt(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    (eve,) = await join_clients(livekit_server, room_name, ["eve"], runtime, can_prompt=False)
    try:
        # Setting the attribute herself does not grant prompting: the grant is signed.
        await eve.room.local_participant.set_attributes({"steward.can_prompt": "true"})
        await wait_for(
            lambda: (
                runtime.participants.get("eve") is not None
                and runtime.participants.get("eve").attributes.get("steward.can_prompt") == "true"
            )  # type: ignore[union-attr]
        )
        reply = await eve.prompt("draw a cat")
        assert reply.session_id is None
        assert reply.error == "not allowed to prompt in this room"
        assert runtime.sessions.sessions == {}
        bad = await eve.cancel("s-unknown")
        assert not bad.ok and bad.error
    finally:
        await close_all([eve])


async def test_malformed_and_oversized_messages_are_rejected_while_another_room_is_served(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    noisy = await steward.join(room_name)
    calm_name = room_name + "-calm"
    calm = await steward.join(calm_name)
    (mallory,) = await join_clients(livekit_server, room_name, ["mallory"], noisy)
    calm_clients = await join_clients(livekit_server, calm_name, ["ann", "ben"], calm)
    try:
        await mallory.send_raw(b"{not json", TOPIC_ACK)
        await mallory.send_raw(json.dumps({"sessionId": "x", "lastSeq": -5}).encode(), TOPIC_RESYNC)
        ack = {"sessionId": "s", "seq": 1, "applied": ["a" * 100] * 150, "appliedAt": 1.0}
        await mallory.send_raw(json.dumps(ack).encode(), TOPIC_ACK)  # over 15 KiB
        await mallory.send_raw(json.dumps({"put": [{"no": "id"}]}).encode(), TOPIC_EDIT)
        reply = await mallory.prompt_raw(json.dumps({"message": "x" * 9_000}))
        assert reply.error and "invalid prompt" in reply.error
        await wait_for(lambda: len(noisy.rejected) >= 5)
        reasons = {(topic, reason) for topic, _, reason in noisy.rejected}
        assert ("agent:ack", "invalid_json") in reasons
        assert ("steward:resync", "schema") in reasons
        assert ("agent:ack", "oversize") in reasons
        assert ("steward.prompt", "schema") in reasons
        assert ("canvas:edit", "invalid") in reasons
        assert all(sender == "mallory" for _, sender, _ in noisy.rejected)
        # The other room is served as usual, and so is the noisy one.
        ok = await calm_clients[0].prompt("draw our signup flow")
        assert ok.session_id and await calm_clients[1].wait_status(ok.session_id) == "done"
        await settle(calm, calm_clients, ok.session_id)
        assert calm_clients[0].shapes == calm_clients[1].shapes and len(calm_clients[0].shapes) == 6
        again = await mallory.prompt("draw our signup flow")
        assert again.session_id and await mallory.wait_status(again.session_id) == "done"
    finally:
        await close_all([mallory, *calm_clients])


async def test_http_run_endpoint_with_and_without_key(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    base = f"http://127.0.0.1:{steward.http_port}"
    body = {"roomId": room_name, "message": "draw our signup flow"}
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/api/canvas-agent/run", json=body) as r:
                assert r.status == 401
            bad_key = {"Authorization": "Bearer nope"}
            async with http.post(f"{base}/api/canvas-agent/run", json=body, headers=bad_key) as r:
                assert r.status == 401
            auth = {"Authorization": f"Bearer {TEST_API_KEY}"}
            # A room this steward does not serve: the run waits in Postgres for its steward.
            elsewhere = {"roomId": f"{room_name}-elsewhere", "message": "hi"}
            async with http.post(f"{base}/api/canvas-agent/run", json=elsewhere, headers=auth) as r:
                queued = await r.json()
                assert r.status == 202 and queued["status"] == "queued", queued
            async with http.get(f"{base}/api/canvas-agent/run/{queued['session']}") as r:
                assert r.status == 401
            async with http.get(
                f"{base}/api/canvas-agent/run/{queued['session']}", headers=auth
            ) as r:
                assert r.status == 200 and (await r.json())["status"] == "queued"
            async with http.post(
                f"{base}/api/canvas-agent/run", json={"roomId": room_name}, headers=auth
            ) as r:
                assert r.status == 400 and "message" in (await r.json())["error"]
            async with http.post(f"{base}/api/canvas-agent/run", json=body, headers=auth) as r:
                ran = await r.json()
                assert r.status == 202 and ran["status"] == "running"
                sid = ran["sessionId"]
            assert await clients[0].wait_status(sid) == "done"
            await settle(runtime, clients, sid)
            assert clients[0].shapes == clients[1].shapes and len(clients[0].shapes) == 6
            async with http.get(f"{base}/healthz") as r:
                health = await r.json()
                assert r.status == 200 and health == {"live": True, "ready": True}
            async with http.get(f"{base}/metrics") as r:
                text = await r.text()
                assert "steward_envelopes_total" in text
                assert 'steward_sessions_total{outcome="done"}' in text
                assert "steward_rejected_inbound_total" in text
    finally:
        await close_all(clients)
