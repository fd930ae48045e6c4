"""The HTTP API under abuse, and the operator's view (real livekit-server + Postgres)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator

import aiohttp
import pytest

from steward.api.app import MAX_BODY_BYTES
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.fixed_script import FixedScriptRunner
from tests.support.room import (
    TEST_API_KEY,
    close_all,
    fixed_script_steward,
    join_clients,
    recording_steward,
)

pytestmark = pytest.mark.integration
AUTH = {"Authorization": f"Bearer {TEST_API_KEY}"}


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    async with fixed_script_steward(livekit_server, database, http=True) as service:
        yield service


async def test_a_caller_cannot_pick_a_file_or_an_unlisted_model(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str, tmp_path: object
) -> None:
    runtime = await steward.join(room_name)
    base = f"http://127.0.0.1:{steward.http_port}/api/canvas-agent/run"
    answers = []
    async with aiohttp.ClientSession() as http:
        for model in [
            "replay:/etc/hostname",
            "replay:/no/such/file",
            "anthropic:claude-opus-4",
            "../x",
        ]:
            body = {"roomId": room_name, "message": "draw a cat", "model": model}
            async with http.post(base, json=body, headers=AUTH) as r:
                answers.append((r.status, (await r.json())["error"]))
        # The configured model stays allowed.
        body = {"roomId": room_name, "message": "draw a cat", "model": "scripted"}
        async with http.post(base, json=body, headers=AUTH) as r:
            assert r.status == 202
    assert {a for a in answers} == {(400, "model not allowed (see STEWARD_MODELS_ALLOWED)")}
    assert len(runtime.sessions.sessions) == 1


async def test_bad_bearer_tokens_and_the_exact_body_limit(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    base = f"http://127.0.0.1:{steward.http_port}"
    async with aiohttp.ClientSession() as http:
        for value in ["Bearer ключ".encode(), b"Bearer \xff\xfe", b"Bearer " + b"\xe9" * 40]:
            headers = {"Authorization": value.decode("latin-1")}
            async with http.post(f"{base}/api/canvas-agent/run", data=b"{}", headers=headers) as r:
                assert r.status == 401
            async with http.get(f"{base}/api/rooms", headers=headers) as r:
                assert r.status == 401
        head = json.dumps({"roomId": room_name, "message": "draw a cat"}).encode()
        exact = head + b" " * (MAX_BODY_BYTES - len(head))
        assert len(exact) == MAX_BODY_BYTES
        async with http.post(f"{base}/api/canvas-agent/run", data=exact, headers=AUTH) as r:
            assert r.status == 202, await r.text()
        async with http.post(f"{base}/api/canvas-agent/run", data=exact + b" ", headers=AUTH) as r:
            assert r.status == 413
    assert len(runtime.sessions.sessions) == 1


async def test_healthz_tells_nothing_and_rooms_need_the_key(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
    base = f"http://127.0.0.1:{steward.http_port}"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as r:
                assert r.status == 200 and await r.json() == {"live": True, "ready": True}
            async with http.get(f"{base}/api/rooms") as r:
                assert r.status == 401
            async with http.get(f"{base}/api/rooms/{room_name}") as r:
                assert r.status == 401
            reply = await clients[0].prompt("draw our signup flow")
            assert reply.session_id
            async with http.get(f"{base}/api/rooms", headers=AUTH) as r:
                rooms = (await r.json())["rooms"]
            (view,) = [v for v in rooms if v["room"] == room_name]
            assert view["host"] == "ann"
            assert [p["identity"] for p in view["participants"]] == ["ann", "bob"]
            assert view["budget_left_usd"] == steward.settings.steward_room_daily_budget_usd
            await clients[1].wait_status(reply.session_id)
            await wait_for(lambda: runtime.sessions.active == 0)
            async with http.get(f"{base}/api/rooms/{room_name}", headers=AUTH) as r:
                one = await r.json()
                assert one["room"] == room_name and one["sessions"] == []
            async with http.get(f"{base}/api/rooms/nowhere", headers=AUTH) as r:
                assert r.status == 404
        # The CLI prints the same as a table.
        env = {
            "STEWARD_API_KEY": TEST_API_KEY,
            "PATH": "/usr/bin:/bin",
            "STEWARD_LOG_LEVEL": "warning",
        }
        # Not subprocess.run: the steward answering it runs on this test's event loop.
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "steward.cli",
            "rooms",
            "--url",
            base,
            env=env,
            stdout=asyncio.subprocess.PIPE,
        )
        stdout, _ = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0
        header, *lines = stdout.decode().splitlines()
        assert header.split()[:3] == ["room", "host", "people"]
        assert any(line.split()[:3] == [room_name, "ann", "2"] for line in lines)
    finally:
        await close_all(clients)


async def test_the_view_lists_a_running_session(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service, _ = await recording_steward(
        livekit_server, database, make=lambda: FixedScriptRunner(step_delay_s=0.3)
    )
    try:
        runtime = await service.join(room_name)
        (ann,) = await join_clients(livekit_server, room_name, ["ann"], runtime)
        try:
            reply = await ann.prompt("draw our signup flow")
            sid = reply.session_id
            assert sid
            await wait_for(lambda: runtime.broadcaster.stats(sid).last_seq >= 1)
            (view,) = await service.rooms_overview(room_name)
            (session,) = view["sessions"]
            assert session["session_id"] == sid and session["requester"] == "ann"
            assert session["seq"] >= 1
        finally:
            await close_all([ann])
    finally:
        await service.close()
