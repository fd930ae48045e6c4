"""Shared fixtures: a real livekit-server, a real Postgres, token minting."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from steward.access import mint_token
from steward.config import Settings
from steward.native_exit import exit_skipping_native_teardown
from steward.store.database import Database, open_database
from steward.store.embedded import EmbeddedPostgres
from steward_tools.livekit_server import LiveKitServer
from tests.support.anthropic_fake import FakeAnthropic


@pytest.fixture(scope="session")
def livekit_server() -> Iterator[LiveKitServer]:
    """One livekit-server process for the whole run, on free loopback ports."""
    server = LiveKitServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """DATABASE_URL when set, else a fresh embedded Postgres for this run.

    Its directory is not under pytest's numbered base temp: another pytest run on the machine
    keeps only the three newest of those and deletes older ones, this Postgres with them."""
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    home = Path(tempfile.mkdtemp(prefix="steward-test-pg-"))
    pg = EmbeddedPostgres(home)
    try:
        yield pg.start()
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
async def fresh_db_url(pg_url: str) -> AsyncIterator[str]:
    """An empty database of its own for one test, dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(pg_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    base, _, query = pg_url.partition("?")
    root = base.rsplit("/", 1)[0]
    yield f"{root}/{name}" + (f"?{query}" if query else "")
    admin = await asyncpg.connect(pg_url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
async def database(fresh_db_url: str) -> AsyncIterator[Database]:
    """A migrated database of its own, with a pool."""
    db = await open_database(Settings(database_url=fresh_db_url))
    try:
        yield db
    finally:
        await db.close()


@pytest.fixture
def token_for(livekit_server: LiveKitServer) -> Callable[..., str]:
    def mint(room: str, identity: str, **kw: object) -> str:
        return mint_token(
            livekit_server.api_key, livekit_server.api_secret, room=room, identity=identity, **kw
        )

    return mint


@pytest.fixture
async def start_fake_anthropic() -> AsyncIterator[Callable[..., Awaitable[FakeAnthropic]]]:
    """Starts local Messages servers (`FakeAnthropic(**fields)`), stopped after the test."""
    servers: list[FakeAnthropic] = []

    async def start(**fields: Any) -> FakeAnthropic:
        server = FakeAnthropic(**fields)
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture
def room_name() -> str:
    return f"room-{uuid.uuid4().hex[:8]}"


async def wait_for(cond: Callable[[], bool], timeout: float = 10.0, step: float = 0.02) -> None:
    """Poll `cond` until true; fail the test with a clear message on timeout."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(step)


_exit_status = 0


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _exit_status
    _exit_status = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # Every fixture has already stopped its servers here: leave with pytest's own status.
    exit_skipping_native_teardown(_exit_status)
