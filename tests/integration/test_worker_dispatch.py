"""`steward worker` registers with a real livekit-server and serves a dispatched room, typed
and spoken prompts alike."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from livekit import api, rtc

from steward.access import mint_token
from steward.commands.worker import db_connections_needed, room_service
from steward.config import Settings
from steward.obs import stack_dump
from steward.protocol.names import ATTR_READY, ATTR_ROLE, TOPIC_CONTEXT
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.stream_sender import send_watching
from steward_tools.voice.microphone import WavMicrophone
from steward_tools.voice.speech import speak
from tests.conftest import wait_for
from tests.support.dumps import dump_after_burst
from tests.support.room import stop_group

pytestmark = pytest.mark.integration


def start_worker(
    livekit_server: LiveKitServer, db_url: str, log_path: Path
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "LIVEKIT_URL": livekit_server.url,
        "LIVEKIT_API_KEY": livekit_server.api_key,
        "LIVEKIT_API_SECRET": livekit_server.api_secret,
        "DATABASE_URL": db_url,
        "STEWARD_AGENT_NAME": "steward-test",
        "STEWARD_SCRIPTED_TOKENS_PER_S": "5000",
        "STEWARD_LOG_FORMAT": "json",
    }
    with log_path.open("wb") as log_file:
        return subprocess.Popen(
            [sys.executable, "-m", "steward.cli", "worker"],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


async def registered(log_path: Path) -> None:
    # Registration can take a while on a busy 2-core machine (livekit-agents warms up).
    await wait_for(lambda: b"registered worker" in log_path.read_bytes(), 120.0, 0.2)


async def test_worker_joins_a_dispatched_room_and_serves_prompts(
    livekit_server: LiveKitServer, fresh_db_url: str, room_name: str, tmp_path: Path
) -> None:
    log_path = tmp_path / "worker.log"
    worker = start_worker(livekit_server, fresh_db_url, log_path)
    client = HeadlessClient.create(
        livekit_server.url,
        livekit_server.api_key,
        livekit_server.api_secret,
        room=room_name,
        identity="ann",
    )
    lk = api.LiveKitAPI(
        livekit_server.url.replace("ws://", "http://"),
        livekit_server.api_key,
        livekit_server.api_secret,
    )
    try:
        await client.connect()
        await registered(log_path)
        await lk.agent_dispatch.create_dispatch(
            api.CreateAgentDispatchRequest(agent_name="steward-test", room=room_name)
        )
        await wait_for(lambda: "canvas-steward" in client.room.remote_participants, 60.0)
        assert worker.poll() is None, "worker exited"
        steward = client.room.remote_participants["canvas-steward"]
        assert steward.kind == rtc.ParticipantKind.PARTICIPANT_KIND_AGENT  # an agent, not hidden
        assert steward.attributes.get(ATTR_ROLE) == "steward"
        # It announced itself (an attribute change is broadcast at once, a join is not), so
        # browsers trust its packets right away, e.g. after a restart.
        await wait_for(lambda: bool(steward.attributes.get(ATTR_READY)), 10.0)
        reply = None
        for _ in range(30):  # the steward needs our join notice before it trusts our packets
            reply = await client.prompt("draw a box")
            if reply.session_id:
                break
            await asyncio.sleep(0.3)
        assert reply is not None and reply.session_id, reply
        status = await client.wait_status(reply.session_id, timeout=30)
        assert status == "done"
        assert client.shapes, "the dispatched steward drew nothing"
        # The job's room has the stream payload cap too: an SDK-compressed 256 MiB of zeros,
        # unasked, from a participant with no rights, is refused without inflating it.
        zed = mint_token(
            livekit_server.api_key,
            livekit_server.api_secret,
            room=room_name,
            identity="zed",
            capabilities=(),
            can_prompt=False,
        )
        outcome, growth = await send_watching(
            livekit_server.url, zed, "canvas-steward", TOPIC_CONTEXT, worker.pid
        )
        assert growth < 32, (outcome, growth)  # 67.9 MB without the cap (docs/PERFORMANCE.md)

        def zed_refused() -> bool:
            lines = log_path.read_text(errors="replace").splitlines()
            events = [json.loads(x) for x in lines if x.startswith("{")]
            return any(
                e.get("event") == "inbound_rejected" and e.get("participant") == "zed"
                for e in events
            )

        await wait_for(zed_refused, 10.0)
        assert worker.poll() is None, "worker exited"
        # Workers join with auto-subscribe off: the steward asks for the microphones itself.
        said = speak("steward, draw a flow chart of our signup", tmp_path / "flow.wav", lead_s=1.5)
        mic = WavMicrophone(client.room)
        subscribed = asyncio.Event()  # the server tells a publisher its track's first subscriber
        client.room.on("local_track_subscribed", lambda _track: subscribed.set())
        await mic.publish()
        before = len(client.shapes)
        await asyncio.wait_for(subscribed.wait(), 10.0)
        await mic.play(said.path)
        await wait_for(lambda: len(client.shapes) >= before + 4, 30.0)
        await mic.close()
    finally:
        await client.disconnect()
        await lk.aclose()
        await stop_group(worker)
        if os.environ.get("STEWARD_TEST_VERBOSE"):
            print(log_path.read_text(errors="replace")[-4000:])


async def test_an_idle_worker_takes_every_room_dispatched_to_it_at_once(
    livekit_server: LiveKitServer, fresh_db_url: str, room_name: str, tmp_path: Path
) -> None:
    # A failover hands an idle worker a burst of rooms. With no job running, livekit-agents
    # counted one reserved slot as a full worker and answered "unavailable" to the rest,
    # which then waited for the next re-dispatch (two minutes in test_failover).
    log_path = tmp_path / "worker.log"
    worker = start_worker(livekit_server, fresh_db_url, log_path)
    rooms = [f"{room_name}-{i}" for i in range(4)]
    clients = [
        HeadlessClient.create(
            livekit_server.url,
            livekit_server.api_key,
            livekit_server.api_secret,
            room=room,
            identity="ann",
        )
        for room in rooms
    ]
    lk = api.LiveKitAPI(
        livekit_server.url.replace("ws://", "http://"),
        livekit_server.api_key,
        livekit_server.api_secret,
    )
    try:
        await asyncio.gather(*(c.connect() for c in clients))
        await registered(log_path)
        await asyncio.gather(
            *(
                lk.agent_dispatch.create_dispatch(
                    api.CreateAgentDispatchRequest(agent_name="steward-test", room=room)
                )
                for room in rooms
            )
        )

        def served() -> int:
            return sum("canvas-steward" in c.room.remote_participants for c in clients)

        try:
            await wait_for(lambda: served() == len(rooms), 45.0)
        except AssertionError:  # fails the test all the same, with the worker's log
            tail = log_path.read_text(errors="replace")[-3000:]
            raise AssertionError(f"{served()} of {len(rooms)} rooms served\n{tail}") from None
        assert worker.poll() is None, "worker exited"
        # The speech engine (an onnxruntime session) was built once, before any job started:
        # jobs that built their own together wedged a worker.
        text = log_path.read_text(errors="replace")
        assert text.count('"speech_engine_built"') == 1
        assert text.index('"speech_engine_built"') < text.index('"lease_acquired"')
        # Its Postgres budget at the defaults (3 per pool, 25 rooms; the watcher's two pools
        # of 2 and the liveness connection), against the server's.
        budget = next(
            json.loads(line)
            for line in text.splitlines()
            if line.startswith("{") and '"worker_db_budget"' in line
        )
        assert budget["connections_needed"] == 2 * 3 * 25 + 2 * 2 + 1
        assert budget["server_max_connections"] >= 100
        assert budget["level"] == "warning"  # 155 > the embedded Postgres' 100
        # An operator's `kill -USR1`, even in a burst: every thread's stack in the log, and the
        # worker goes on serving (faulthandler here crashed a serving worker with SIGSEGV).
        for _ in range(20):
            os.kill(worker.pid, stack_dump.SAFE_SIGNAL)
            await asyncio.sleep(0.05)
        await wait_for(lambda: stack_dump.HEADER.encode() in log_path.read_bytes(), 10.0, 0.1)
        await asyncio.to_thread(
            dump_after_burst, worker.pid, lambda: log_path.read_text(errors="replace")
        )
        assert worker.poll() is None, "worker exited on SIGUSR1"
        assert served() == len(rooms)
        assert b"thread MainThread" in log_path.read_bytes()
    finally:
        await asyncio.gather(*(c.disconnect() for c in clients))
        await lk.aclose()
        await stop_group(worker)


async def test_a_worker_rooms_service_opens_small_pools(fresh_db_url: str) -> None:
    # Every room of a worker has a service with pools of its own; at the service's default
    # (10 per pool) twelve rooms could ask for 240 connections, past Postgres' 100.
    settings = Settings(database_url=fresh_db_url, steward_worker_room_pool_size=2)
    service = room_service(settings)
    await service.start(http=False)
    try:
        assert service.db is not None
        assert service.db.pool.get_max_size() == 2
        assert service.db.stream_pool.get_max_size() == 2
    finally:
        await service.close()
    assert db_connections_needed(settings) == 2 * 2 * 25 + 2 * 2 + 1
    assert db_connections_needed(settings, http=True) == 2 * 2 * 25 + 2 * 2 + 1 + 2 * 10
