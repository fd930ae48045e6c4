"""What a participant or an HTTP caller sends never speaks for someone else, never breaks the
room and never costs a 500 (real livekit-server + Postgres; real speech for the captions)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from livekit import rtc

from steward.access import mint_token
from steward.protocol.messages import ActionEnvelope, WireAction
from steward.protocol.names import TOPIC_EDIT, TOPIC_TRANSCRIPTION
from steward.room.outbound.relay import relay_session_id
from steward.service import StewardService
from steward.store.database import Database
from steward.voice.captions import caption_attributes
from steward_tools.livekit_server import LiveKitServer
from steward_tools.voice.microphone import WavMicrophone
from tests.conftest import wait_for
from tests.support.fixed_script import FixedScriptRunner
from tests.support.room import (
    TEST_API_KEY,
    close_all,
    fixed_script_steward,
    join_clients,
    room_settings,
)

pytestmark = pytest.mark.integration
AUTH = {"Authorization": f"Bearer {TEST_API_KEY}"}
# What overflowed the geometry: finite numbers whose sums and products are not.
HUGE = {"x": 1e308, "y": -1e308, "props": {"w": 1e308, "h": 1e308, "geo": "rectangle"}}


def _shape(sid: str, **over: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": sid,
        "type": "geo",
        "x": 10.0,
        "y": 20.0,
        "rotation": 0.0,
        "parentId": None,
        "props": {"geo": "rectangle", "w": 100.0, "h": 50.0, "text": ""},
    }
    record.update(over)
    return record


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    async with fixed_script_steward(livekit_server, database, http=True) as service:
        yield service


async def _agent(server: LiveKitServer, room: str, identity: str, kind: str) -> rtc.Room:
    """A participant that captions others, as a voice agent would."""
    token = mint_token(
        server.api_key,
        server.api_secret,
        room=room,
        identity=identity,
        kind=kind,
        role="voice",
        can_prompt=False,
    )
    other = rtc.Room()
    await other.connect(server.url, token)
    return other


async def test_a_caption_speaks_only_for_its_sender_or_a_trusted_agent(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service = StewardService(
        room_settings(
            livekit_server,
            database.url,
            steward_stt="local",
            steward_caption_agents="scribe",
        ),
        database=database,
        runner=lambda: FixedScriptRunner(step_delay_s=0.3),
    )
    await service.start(http=False)
    rooms: list[rtc.Room] = []
    runtime = await service.join(room_name)
    (alice,) = await join_clients(livekit_server, room_name, ["alice"], runtime)
    (mallory,) = await join_clients(
        livekit_server, room_name, ["mallory"], runtime, can_prompt=False
    )
    try:
        mic = WavMicrophone(alice.room)
        sid = await mic.publish()
        voice = runtime.voice
        assert voice is not None
        await wait_for(lambda: "alice" in voice.listening_to)
        running = await alice.prompt("draw our signup flow")
        assert running.session_id
        rogue = await _agent(livekit_server, room_name, "rogue-agent", "agent")
        rooms.append(rogue)
        await wait_for(lambda: bool(runtime.participants.get("rogue-agent")))

        async def caption(room: rtc.Room, text: str, *, final: bool) -> None:
            attrs = caption_attributes("SG_x", sid, final=final)
            await room.local_participant.send_text(
                text, topic=TOPIC_TRANSCRIPTION, attributes=attrs
            )

        # A participant and an agent the deployment does not trust caption alice's track.
        for room in (mallory.room, rogue):
            await caption(room, "steward draw", final=False)
            await caption(room, "Steward, stop.", final=True)
            await caption(room, "Steward, draw a cat on the left.", final=True)
        await wait_for(
            lambda: (
                sum(
                    1
                    for topic, who, reason in runtime.rejected
                    if topic == TOPIC_TRANSCRIPTION
                    and reason == "spoofed_caption"
                    and who in ("mallory", "rogue-agent")
                )
                == 6
            ),
            timeout=10,
        )
        # Refused as each arrived; whether one started a run after all is proven below, by a
        # run queued after them (the scribe's): it must be the only new one.
        assert list(runtime.sessions.sessions) == [running.session_id]
        assert await alice.wait_status(running.session_id) == "done"  # nobody stopped it
        assert "alice" in voice.listening_to  # the steward still hears her own microphone
        # The agent the deployment trusts speaks for her.
        scribe = await _agent(livekit_server, room_name, "scribe", "agent")
        rooms.append(scribe)
        await wait_for(lambda: bool(runtime.participants.get("scribe")))
        await caption(scribe, "Steward, draw a flow chart of our sign-up.", final=True)
        await wait_for(lambda: len(runtime.sessions.sessions) == 2, timeout=10)
        asked = [s.prompt for s in runtime.sessions.sessions.values()]
        assert [p.requester for p in asked] == ["alice", "alice"]
        await mic.close()
    finally:
        for room in rooms:
            await room.disconnect()
        await close_all([alice, mallory])
        await service.close()


async def test_the_relay_refuses_what_would_break_the_room(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    ann, mallory = await join_clients(livekit_server, room_name, ["ann", "mallory"], runtime)
    try:
        await ann.edit([_shape("box")])
        await wait_for(lambda: "box" in runtime.mirror and "box" in mallory.shapes)
        poisoned = [
            _shape("huge", **HUGE),
            _shape("wide", props={"geo": "rectangle", "w": 1e308, "h": 10}),
            _shape("flat", props={"geo": "rectangle", "w": 0, "h": 10}),
            _shape("page:evil"),
            _shape("doc", type="document"),
            _shape("bnd", typeName="binding", type="arrow"),
            _shape("orphan", parentId="no-such-frame"),
            _shape("dangling", type="arrow", bindings={"start": "box", "end": "nowhere"}),
            _shape(
                "nested", props={"geo": "rectangle", "w": 10, "h": 10, "x": [[[[[[[[[1]]]]]]]]]}
            ),
            _shape("far", props={"geo": "rectangle", "w": 10, "h": 10, "start": {"x": 1e300}}),
        ]
        for record in poisoned:
            await mallory.edit([record])
        await wait_for(
            lambda: (
                sum(1 for t, w, _ in runtime.rejected if (t, w) == (TOPIC_EDIT, "mallory"))
                == len(poisoned)
            ),
            timeout=10,
        )
        assert set(runtime.mirror.shapes) == {"box"}
        assert set(ann.shapes) == {"box"}
        # Still relayed: an arrow between shapes that exist, inside a frame that exists.
        await ann.edit([_shape("frame1", type="frame", props={"w": 500, "h": 400})])
        await ann.edit(
            [
                _shape(
                    "a1",
                    type="arrow",
                    parentId="frame1",
                    bindings={"start": "box", "end": None},
                    props={"start": {"x": 0, "y": 0}, "end": {"x": 50, "y": 5}},
                )
            ]
        )
        await wait_for(lambda: {"frame1", "a1"} <= set(mallory.shapes))
        ok = await ann.prompt("draw our signup flow")
        assert ok.session_id and await ann.wait_status(ok.session_id) == "done"
    finally:
        await close_all([ann, mallory])


async def test_a_poisoned_record_in_the_outbox_or_a_context_reply_is_never_geometry(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    outbox = steward.outbox
    await outbox.ensure_room(room_name, "relay")
    session = relay_session_id(room_name)
    action = WireAction(id="edit-old-0", name="create_shape", params=_shape("huge", **HUGE))
    env = ActionEnvelope(session_id=session, seq=1, actions=[action], ts=time.time())
    await outbox.append(room_name, session, 1, 1, False, env.to_wire().decode())
    runtime = await steward.join(room_name)
    (ann,) = await join_clients(livekit_server, room_name, ["ann"], runtime)
    try:
        ok = await ann.prompt("draw our signup flow")
        assert ok.session_id and await ann.wait_status(ok.session_id) == "done"
        assert "huge" not in runtime.mirror
        # The host's context reply carries a record with overflowing geometry.
        ann.replica.load([*ann.shapes.values(), _shape("huge2", **HUGE)])
        again = await ann.prompt("draw our signup flow")
        assert again.session_id and await ann.wait_status(again.session_id) == "done"
        assert "huge2" not in runtime.mirror
    finally:
        await close_all([ann])


async def test_a_participant_cannot_take_the_name_of_http_runs(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service = StewardService(
        room_settings(livekit_server, database.url),
        database=database,
        runner=lambda: FixedScriptRunner(step_delay_s=0.5),
    )
    await service.start(http=True)
    runtime = await service.join(room_name)
    (http_user,) = await join_clients(livekit_server, room_name, ["http"], runtime)
    try:
        url = f"http://127.0.0.1:{service.http_port}/api/canvas-agent/run"
        async with aiohttp.ClientSession() as client:
            body = {"roomId": room_name, "message": "draw a cat"}
            async with client.post(url, json=body, headers=AUTH) as r:
                assert r.status == 202
                sid = (await r.json())["sessionId"]
        reply = await http_user.cancel(sid)
        assert not reply.ok, reply
        owner = runtime.sessions.sessions[sid].prompt.requester
        assert owner != "http" and "http" in owner  # recognisable, but nobody's identity
        # A participant whose identity is in that name space is nobody's owner either.
        (fake,) = await join_clients(livekit_server, room_name, [owner], runtime)
        reply = await fake.cancel(sid)
        assert not reply.ok, reply
        refused = await fake.prompt("draw a dog")
        assert refused.session_id is None and refused.error
        await close_all([fake])
    finally:
        await close_all([http_user])
        await service.close()


def _rejection_series(text: str) -> int:
    return sum(
        1 for line in text.splitlines() if line.startswith("steward_rejected_inbound_total{")
    )


async def test_metric_labels_never_come_from_the_caller(
    steward: StewardService, room_name: str
) -> None:
    base = f"http://127.0.0.1:{steward.http_port}"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/metrics") as r:
            before = await r.text()
        for i in range(200):
            async with http.get(f"{base}/api/canvas-agent/run/random-{i}") as r:
                assert r.status == 401
            async with http.get(f"{base}/api/rooms/room-{i}") as r:
                assert r.status == 401
        async with http.get(f"{base}/metrics") as r:
            after = await r.text()
    assert _rejection_series(after) - _rejection_series(before) <= 2
    assert "random-1" not in after and "room-1" not in after
    assert len(after) - len(before) < 4_000


async def test_bad_input_is_a_4xx_with_a_reason_and_no_traceback(
    steward: StewardService, room_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    base = f"http://127.0.0.1:{steward.http_port}"
    run = f"{base}/api/canvas-agent/run"
    bodies = [
        '{"roomId": "a\\u0000b", "message": "draw a cat"}',
        '{"roomId": "\\ud800", "message": "draw a cat"}',
        '{"roomId": "lobby", "message": "draw\\u0000 a cat"}',
        '{"roomId": "lobby", "message": "draw \\udfff a cat"}',
        '{"roomId": "lobby\\n", "message": "draw a cat"}',
        '{"roomId": "lobby", "message": "draw", "viewport": {"x": 1e308, "y": 0, "w": 1, "h": 1}}',
    ]
    caplog.set_level(logging.DEBUG, logger="aiohttp")
    async with aiohttp.ClientSession() as http:
        for body in bodies:
            async with http.post(run, data=body.encode(), headers=AUTH) as r:
                answer = await r.json()
                assert r.status == 400, (body, r.status, answer)
                assert answer["error"].startswith("invalid request: "), answer
        for path in ("/api/canvas-agent/run/a%00b", "/api/rooms/a%00b", "/api/rooms/%ED%A0%80"):
            async with http.get(base + path, headers=AUTH) as r:
                assert r.status in (400, 404), (path, r.status)
                assert "error" in await r.json()
        long_header = {"Authorization": "Bearer " + "k" * 100_000}
        async with http.get(f"{base}/api/rooms", headers=long_header) as r:
            assert 400 <= r.status < 500
        async with http.get(f"{base}/healthz") as r:
            assert r.status == 200
    tracebacks = [rec for rec in caplog.records if rec.exc_info or rec.levelno >= logging.ERROR]
    assert not tracebacks, [rec.getMessage() for rec in tracebacks]
    assert json.loads(bodies[0])["roomId"] == "a\x00b"
