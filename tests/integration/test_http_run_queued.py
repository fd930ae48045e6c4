"""`POST /api/canvas-agent/run` for a room no steward serves, over the real stack: a real
`steward worker --http` process (agent dispatch), a second process accepting runs (an
in-process API service), two headless clients, the real `anthropic:` provider against the
local Messages server. Each run is queued, the room dispatched, and the worker's steward runs
the runs once each, in order, under the session ids their callers got. A run for a room
another process serves is queued without a dispatch and taken by that room's steward. A run
whose taker died before starting it, and a run queued behind a draining steward, are run by
the room's next steward under the ids their callers got."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from structlog.testing import capture_logs

from steward.config import Settings
from steward.room.runtime import RoomRuntime
from steward.room.workers.livekit_admin import LiveKitAdmin
from steward.service import StewardService
from steward.store.database import Database
from steward.store.leases import RoomLeases
from steward.store.queued_runs import QueuedRuns
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.anthropic_server import MessagesServer
from steward_tools.rigs.request_text import RequestView
from steward_tools.rigs.responders import SchemaResponder
from tests.conftest import wait_for
from tests.support.clock import lapse_leases
from tests.support.fixed_script import FixedScriptRunner
from tests.support.room import (
    ROOT,
    TEST_API_KEY,
    close_all,
    join_clients,
    room_settings,
    settle,
    steward_env,
    stop_group,
)

pytestmark = pytest.mark.integration
AUTH = {"Authorization": f"Bearer {TEST_API_KEY}"}
AGENT = "steward-httprun-test"
PROMPTS = ["draw the queued signup flow", "then label the queued review step"]


def spawn_worker(
    server: LiveKitServer, db_url: str, model_url: str, log: Path
) -> subprocess.Popen[bytes]:
    env = steward_env(
        server,
        db_url,
        STEWARD_AGENT_NAME=AGENT,
        STEWARD_MODEL="anthropic:claude-queue-test",
        ANTHROPIC_BASE_URL=model_url,
        ANTHROPIC_API_KEY="test",
        STEWARD_API_KEY=TEST_API_KEY,
        STEWARD_HTTP_PORT="0",
    )
    return subprocess.Popen(
        ["uv", "run", "--frozen", "steward", "worker", "--http"],
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def log_lines(log: Path, event: str) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text(errors="replace").splitlines():
        if f'"{event}"' in line:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return [e for e in out if e.get("event") == event]


async def final_state(http: aiohttp.ClientSession, base: str, sid: str) -> str:
    """The run's state once it is no longer waiting or running (the browsers may see `done`
    a moment before its steward records it)."""
    for _ in range(100):
        async with http.get(f"{base}/api/canvas-agent/run/{sid}", headers=AUTH) as r:
            assert r.status == 200
            state = str((await r.json())["status"])
        if state not in ("queued", "taken", "running"):
            return state
        await asyncio.sleep(0.1)
    return state


@dataclass
class _Draws(SchemaResponder):
    """One rectangle, then what the schema sampler picks: every run draws, whichever actions
    the schema offers today (a sample alone may be only talk or reorders)."""

    def actions(
        self, view: RequestView, rng: random.Random, skip: Callable[[str], bool] | None = None
    ) -> list[dict[str, Any]]:
        shape = {"_type": "rectangle", "shapeId": f"box{len(self.answered)}", "x": 40, "y": 40}
        box = {"_type": "create", "intent": "a box", "shape": {**shape, "w": 120, "h": 80}}
        return [box, *super().actions(view, rng, skip)]


async def test_http_runs_for_a_room_no_steward_serves_are_queued_and_run_once_everywhere(
    livekit_server: LiveKitServer, database: Database, room_name: str, tmp_path: Path
) -> None:
    model = MessagesServer(responder=_Draws(seed=11, max_actions=4))
    await model.start()
    log = tmp_path / "worker.log"
    worker = spawn_worker(livekit_server, database.url, model.base_url, log)
    # A second process that accepts runs: an API service serving no room.
    other = StewardService(
        room_settings(livekit_server, database.url, steward_agent_name=AGENT),
        database=database,
        fairies=False,
    )
    await other.start()
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"])
    try:
        await wait_for(lambda: bool(log_lines(log, "http_listening")), 120, 0.2)
        await wait_for(lambda: b"registered worker" in log.read_bytes(), 120, 0.2)
        bases = [
            f"http://127.0.0.1:{log_lines(log, 'http_listening')[0]['port']}",
            f"http://127.0.0.1:{other.http_port}",
        ]
        # No steward is in the room: each process queues its run and dispatches the room.
        answers = []
        async with aiohttp.ClientSession() as http:
            for base, prompt in zip(bases, PROMPTS, strict=True):
                body = {"roomId": room_name, "message": prompt}
                async with http.post(f"{base}/api/canvas-agent/run", json=body, headers=AUTH) as r:
                    assert r.status == 202
                    answers.append(await r.json())
            assert [a["status"] for a in answers] == ["queued", "queued"]
            sids = [a["session"] for a in answers]
            assert all(a["sessionId"] == a["session"] for a in answers)
            for sid in sids:  # the ids the callers got are the ones the browsers see
                for client in clients:
                    assert await client.wait_status(sid, timeout=120) == "done"
            await wait_for(  # every envelope of both sessions applied in both browsers
                lambda: all(
                    c.applied_seq(s) == c.announced_last_seq(s) for c in clients for s in sids
                ),
                timeout=20,
            )
            assert clients[0].shapes == clients[1].shapes
            for base, sid in zip(bases, reversed(sids), strict=True):  # any process reads any run
                assert await final_state(http, base, sid) == "done"
            async with http.get(f"{bases[0]}/api/canvas-agent/run/s-none", headers=AUTH) as r:
                assert r.status == 404
        assert clients[0].shapes, "the queued runs drew nothing"
        assert worker.poll() is None, "worker exited"
        # Once each, in order: one take and one start per run, the second after the first.
        taken = [e["session_id"] for e in log_lines(log, "queued_run_taken")]
        started = [e["session_id"] for e in log_lines(log, "session_started")]
        assert taken == sids and started == sids, (taken, started)
        assert await database.pool.fetchval("SELECT count(*) FROM agent_sessions") == len(sids)
        # Each prompt reached the model (which answers only from what each request says).
        asked = json.dumps(model.requests)
        assert all(p in asked for p in PROMPTS)
    finally:
        await close_all(clients)
        await other.close()
        await stop_group(worker, 30)
        await model.stop()
        if os.environ.get("STEWARD_TEST_VERBOSE"):
            print(log.read_text(errors="replace")[-6000:])


@dataclass
class ServedElsewhere:
    """A room one steward serves, two clients in it, and the API of another that serves none."""

    serving: StewardService
    runtime: RoomRuntime
    clients: list[HeadlessClient]
    settings: Settings  # the accepting service's
    base: str  # its HTTP API

    async def queue(self, http: aiohttp.ClientSession, body: dict[str, Any]) -> str:
        """POST the run; it is queued (this API serves no room). Returns its session id."""
        async with http.post(f"{self.base}/api/canvas-agent/run", json=body, headers=AUTH) as r:
            answer = await r.json()
            assert r.status == 202 and answer["status"] == "queued", answer
        return str(answer["session"])


@contextlib.asynccontextmanager
async def served_elsewhere(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> AsyncIterator[ServedElsewhere]:
    serving = StewardService(
        room_settings(livekit_server, database.url, steward_queue_poll_seconds=0.2),
        database=database,
        runner=lambda: FixedScriptRunner(),
    )
    await serving.start(http=False)
    runtime = await serving.join(room_name)
    settings = room_settings(livekit_server, database.url, steward_agent_name=AGENT)
    accepting = await StewardService(settings, database=database, fairies=False).start()
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    base = f"http://127.0.0.1:{accepting.http_port}"
    try:
        yield ServedElsewhere(serving, runtime, clients, settings, base)
    finally:
        await close_all(clients)
        await accepting.close()
        await serving.close()


async def test_a_run_for_a_room_served_elsewhere_is_taken_by_its_steward_without_dispatch(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    async with served_elsewhere(livekit_server, database, room_name) as rig:
        runtime, clients = rig.runtime, rig.clients
        admin = LiveKitAdmin.from_settings(rig.settings)
        try:
            async with aiohttp.ClientSession() as http:
                sid = await rig.queue(
                    http, {"roomId": room_name, "message": "draw our signup flow"}
                )
                for client in clients:
                    assert await client.wait_status(sid, timeout=30) == "done"
                await settle(runtime, clients, sid)
                assert await final_state(http, rig.base, sid) == "done"
            assert clients[0].shapes == clients[1].shapes and len(clients[0].shapes) == 6
            assert list(runtime.sessions.sessions) == [sid]
            # Its steward was live: no dispatch for our agent name was made.
            made = [d for d in await admin.dispatches(room_name) if d.agent_name == AGENT]
            assert made == []
        finally:
            await admin.aclose()


async def test_an_http_run_for_picked_fairies_is_worked_by_them_after_its_queue(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    async with served_elsewhere(livekit_server, database, room_name) as rig:
        runtime, clients = rig.runtime, rig.clients
        async with aiohttp.ClientSession() as http:
            body = {
                "roomId": room_name,
                "message": "draw a garden",
                "fairies": ["fairy-3", "fairy-1"],
            }
            sid = await rig.queue(http, body)
            for client in clients:
                assert await client.wait_status(sid, timeout=60) == "done"
            await settle(runtime, clients, sid)
        assert rig.serving.fairies is not None
        (project,) = rig.serving.fairies.rooms[room_name].board.projects.values()
        assert project.kind == "duo" and project.status == "done"
        assert project.orchestrator == "fairy-3" and project.members == ("fairy-1",)
        assert clients[0].shapes and clients[0].shapes == clients[1].shapes


@pytest.fixture
async def model() -> AsyncIterator[MessagesServer]:
    server = MessagesServer(responder=SchemaResponder(seed=11, max_actions=4))
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def accepting(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    """An API service serving no room: every run it accepts is queued."""
    settings = room_settings(livekit_server, database.url, steward_agent_name=AGENT)
    service = await StewardService(settings, database=database, fairies=False).start()
    yield service
    await service.close()


async def queue_run(
    http: aiohttp.ClientSession, service: StewardService, room: str, prompt: str
) -> str:
    """POST the run to `service`; its session id (the run was queued)."""
    body = {"roomId": room, "message": prompt}
    url = f"http://127.0.0.1:{service.http_port}/api/canvas-agent/run"
    async with http.post(url, json=body, headers=AUTH) as r:
        answer = await r.json()
        assert r.status == 202 and answer["status"] == "queued", answer
        return str(answer["session"])


async def model_steward(
    server: LiveKitServer, database: Database, model: MessagesServer
) -> StewardService:
    """A steward (no room yet, no HTTP) whose model is `anthropic:` on the local server."""
    settings = room_settings(
        server,
        database.url,
        steward_model="anthropic:claude-queue-test",
        anthropic_base_url=model.base_url,
        steward_queue_poll_seconds=0.2,
        steward_context_timeout_s=2.0,
    )
    return await StewardService(settings, database=database, fairies=False).start(http=False)


async def read_state(http: aiohttp.ClientSession, base: str, sid: str) -> str:
    async with http.get(f"{base}/api/canvas-agent/run/{sid}", headers=AUTH) as r:
        assert r.status == 200
        return str((await r.json())["status"])


async def test_a_run_whose_steward_died_before_starting_it_is_run_by_the_next_one(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    model: MessagesServer,
    accepting: StewardService,
) -> None:
    serving = await model_steward(livekit_server, database, model)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"])
    base = f"http://127.0.0.1:{accepting.http_port}"
    try:
        async with aiohttp.ClientSession() as http:
            sid = await queue_run(http, accepting, room_name, PROMPTS[0])
            # A steward takes the run and dies before starting its session.
            dead = await RoomLeases(database.pool, "dead", ttl_s=30).acquire(room_name)
            taken = await QueuedRuns(database.pool).take(room_name, owner="dead", token=dead.token)
            assert taken is not None and taken.session_id == sid
            assert await read_state(http, base, sid) == "taken"
            await lapse_leases(database.pool, [room_name], 31)  # the run waits again
            assert await read_state(http, base, sid) == "queued"
            # The next steward of the room runs it, under the id its caller was given.
            runtime = await serving.join(room_name)
            for client in clients:
                assert await client.wait_status(sid, timeout=60) == "done"
            assert await final_state(http, base, sid) == "done"
        assert list(runtime.sessions.sessions) == [sid]
        row = await database.pool.fetchrow("SELECT taken_by, taken_token FROM queued_runs")
        assert row is not None and row["taken_by"] == serving.owner
        assert row["taken_token"] == dead.token + 1
        assert await database.pool.fetchval("SELECT count(*) FROM agent_sessions") == 1
        assert PROMPTS[0] in json.dumps(model.requests)
        assert clients[0].shapes == clients[1].shapes
    finally:
        await close_all(clients)
        await serving.close()


async def test_runs_queued_behind_a_draining_steward_stay_queued_for_the_next_one(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    model: MessagesServer,
    accepting: StewardService,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    draining = await model_steward(livekit_server, database, model)
    following = await model_steward(livekit_server, database, model)
    # The drain begins while the taken run's session row is being written: the widest
    # moment for it to look neither queued nor running.
    outbox = draining.outbox
    starting, release = asyncio.Event(), asyncio.Event()
    start_session = outbox.start_session

    async def held_start(**row: Any) -> None:
        starting.set()
        await release.wait()
        await start_session(**row)

    monkeypatch.setattr(outbox, "start_session", held_start)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"])
    base = f"http://127.0.0.1:{accepting.http_port}"
    try:
        async with aiohttp.ClientSession() as http:
            sids = [await queue_run(http, accepting, room_name, p) for p in PROMPTS]
            first = await draining.join(room_name)  # takes the first run; the second waits
            await asyncio.wait_for(starting.wait(), timeout=15)
            # SIGTERM's path: the running run may finish, the waiting one is not started.
            with capture_logs() as logs:
                drain = asyncio.create_task(draining.drain(timeout_s=60))
                # It has counted the running run and waits for it.
                await wait_for(lambda: any(e["event"] == "drain_started" for e in logs))
                started = next(e for e in logs if e["event"] == "drain_started")
                assert started["sessions"] == 1, started
                assert not drain.done()
            release.set()
            await drain
            assert await read_state(http, base, sids[0]) == "done"
            assert await read_state(http, base, sids[1]) == "queued"
            assert list(first.sessions.sessions) == sids[:1]
            # Released at once: the next steward takes the room and runs the second.
            second = await following.join(room_name)
            for client in clients:
                assert await client.wait_status(sids[1], timeout=60) == "done"
            assert await final_state(http, base, sids[1]) == "done"
        assert list(second.sessions.sessions) == sids[1:]
        owners = await database.pool.fetch(
            "SELECT session_id, taken_by FROM queued_runs ORDER BY created_at"
        )
        assert [(r["session_id"], r["taken_by"]) for r in owners] == [
            (sids[0], draining.owner),
            (sids[1], following.owner),
        ]
        assert await database.pool.fetchval("SELECT count(*) FROM agent_sessions") == 2
        assert all(p in json.dumps(model.requests) for p in PROMPTS)
    finally:
        await close_all(clients)
        await following.close()
        await draining.close()
