"""Helpers for the room runtime tests: a steward service and headless clients in one room."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from steward.config import Settings
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.store.database import Database
from steward.task_set import close_within
from steward_tools.headless.client import Faults, HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.fixed_script import FixedScriptRunner

TEST_API_KEY = "test-api-key-0123456789"
ROOT = Path(__file__).resolve().parents[2]


def steward_env(server: LiveKitServer, db_url: str, **env: str) -> dict[str, str]:
    """The environment of a steward process on this LiveKit and database (scripted model,
    JSON logs); `env` adds or overrides settings."""
    return {
        **os.environ,
        "LIVEKIT_URL": server.url,
        "LIVEKIT_API_KEY": server.api_key,
        "LIVEKIT_API_SECRET": server.api_secret,
        "DATABASE_URL": db_url,
        "STEWARD_MODEL": "scripted",
        "STEWARD_LOG_FORMAT": "json",
        "STEWARD_CONTEXT_TIMEOUT_S": "1.0",
        **env,
    }


def spawn_join(
    server: LiveKitServer, db_url: str, room: str, log: Path, **env: str
) -> subprocess.Popen[bytes]:
    """A real `steward join ROOM` process (JSON logs to `log`) in a session of its own, so
    signals reach uv and the python it runs; `env` adds settings."""
    return subprocess.Popen(
        ["uv", "run", "--frozen", "steward", "join", room, "--no-http"],
        cwd=ROOT,
        env=steward_env(server, db_url, **env),
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


async def stop_group(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """SIGTERM the process's group (it drains), SIGKILL it if it is not gone in `timeout`.
    A group already gone is no error: the test's own assertion says why it went."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.to_thread(proc.wait, timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


async def prompt_until_accepted(client: HeadlessClient, message: str) -> str:
    """The steward learns who may prompt from attributes: retry briefly; the session id."""
    for _ in range(50):
        reply = await client.prompt(message)
        if reply.session_id:
            return reply.session_id
        await asyncio.sleep(0.1)
    raise AssertionError(f"prompt never accepted: {reply}")


def rectangle(
    sid: str, x: float, y: float, *, w: float = 200, h: float = 120, **props: Any
) -> dict[str, Any]:
    """A geo rectangle record as a user's edit sends it; `props` adds to its props."""
    return {
        "id": sid,
        "type": "geo",
        "x": x,
        "y": y,
        "rotation": 0,
        "props": {"geo": "rectangle", "w": w, "h": h, **props},
    }


def room_settings(server: LiveKitServer, db_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "livekit_url": server.url,
        "livekit_api_key": server.api_key,
        "livekit_api_secret": server.api_secret,
        "database_url": db_url,
        "steward_http_host": "127.0.0.1",
        "steward_http_port": 0,
        "steward_api_key": TEST_API_KEY,
        "steward_retransmit_after_ms": 150,
        "steward_retransmit_attempts": 3,
        "steward_context_timeout_s": 0.6,
        "steward_watchdog_s": 30,
    }
    values.update(overrides)
    return Settings(**values)


async def join_clients(
    server: LiveKitServer,
    room: str,
    identities: list[str],
    runtime: RoomRuntime | None = None,
    faults: dict[str, Faults] | None = None,
    **kw: Any,
) -> list[HeadlessClient]:
    clients = []
    for identity in identities:
        client = HeadlessClient.create(
            server.url,
            server.api_key,
            server.api_secret,
            room=room,
            identity=identity,
            faults=(faults or {}).get(identity),
            **kw,
        )
        await client.connect()
        clients.append(client)
    if runtime is not None:
        await wait_for(lambda: all(runtime.participants.get(i) for i in identities))
    return clients


async def settle(runtime: RoomRuntime, clients: list[HeadlessClient], session_id: str) -> None:
    """Wait until every client applied the session's last envelope and nothing is unacked."""
    last = runtime.broadcaster.stats(session_id).last_seq
    assert last > 0
    await wait_for(
        lambda: (
            all(c.applied_seq(session_id) == last for c in clients)
            and runtime.broadcaster.total_unacked() == 0
        ),
        timeout=20,
    )


async def drawn_run(
    client: HeadlessClient, runtime: RoomRuntime, everyone: list[HeadlessClient]
) -> str:
    """`client` asks for the fixed script's drawing; returns its run once every client has
    applied all of it."""
    reply = await client.prompt("draw our signup flow")
    assert reply.session_id, reply.error
    assert await client.wait_status(reply.session_id) == "done"
    await settle(runtime, everyone, reply.session_id)
    return reply.session_id


async def converged(runtime: RoomRuntime, clients: list[HeadlessClient]) -> dict[str, Any]:
    """Waits until nothing is unacked and every client's canvas equals the steward's mirror;
    returns a copy of it."""
    await wait_for(
        lambda: (
            runtime.broadcaster.total_unacked() == 0
            and all(c.shapes == runtime.mirror.shapes for c in clients)
        ),
        timeout=20,
    )
    return copy.deepcopy(runtime.mirror.shapes)


async def close_all(clients: list[HeadlessClient]) -> None:
    """Disconnect every client, each within a bound: a teardown must never hang a test."""
    for c in clients:
        await close_within(c.disconnect(), "test_client", identity=c.identity)


@contextlib.asynccontextmanager
async def fixed_script_steward(
    server: LiveKitServer, database: Database, *, http: bool, **overrides: Any
) -> AsyncIterator[StewardService]:
    """A started steward whose runner sends the fixed action script."""
    service = StewardService(
        room_settings(server, database.url, **overrides),
        database=database,
        runner=lambda: FixedScriptRunner(),
    )
    await service.start(http=http)
    try:
        yield service
    finally:
        await service.close()


async def recording_steward(
    server: LiveKitServer,
    database: Database,
    make: Callable[[], FixedScriptRunner] = FixedScriptRunner,
    **overrides: Any,
) -> tuple[StewardService, list[FixedScriptRunner]]:
    """A started steward (no HTTP) whose runners, one per session, are kept for the test."""
    runners: list[FixedScriptRunner] = []

    def runner() -> FixedScriptRunner:
        runners.append(make())
        return runners[-1]

    service = StewardService(
        room_settings(server, database.url, **overrides), database=database, runner=runner
    )
    await service.start(http=False)
    return service, runners


@contextlib.asynccontextmanager
async def paced_steward(
    server: LiveKitServer, database: Database, step_delay_s: float, **overrides: Any
) -> AsyncIterator[StewardService]:
    """A started steward (no HTTP) whose fixed-script runs pause `step_delay_s` between
    steps, so a test can act while a run is still drawing; `overrides` are settings."""
    service, _ = await recording_steward(
        server, database, make=lambda: FixedScriptRunner(step_delay_s=step_delay_s), **overrides
    )
    try:
        yield service
    finally:
        await service.close()
