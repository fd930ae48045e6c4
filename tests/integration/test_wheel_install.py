"""The steward as an operator installs it: its wheel in a fresh virtual environment outside the
repository (from the uv cache, no network), `steward join ROOM` started from there with its
working directory outside the repository, against a real livekit-server and Postgres; a
headless client's prompt is served and drawn."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from livekit import api

from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.room import (
    ROOT,
    close_all,
    join_clients,
    prompt_until_accepted,
    steward_env,
    stop_group,
)

pytestmark = pytest.mark.integration


def _uv(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["uv", *args], cwd=cwd, capture_output=True, timeout=300)
    assert proc.returncode == 0, f"uv {' '.join(args)}: {proc.stderr.decode()[-3000:]}"


@pytest.fixture(scope="module")
def installed() -> Iterator[Path]:
    """A directory outside the repository holding `venv/`, the wheel installed into it. Not
    under pytest's basetemp: other pytest runs on the machine prune old basetemps."""
    work = Path(tempfile.mkdtemp(prefix="steward-wheel-"))
    try:
        yield _install(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _install(work: Path) -> Path:
    """Builds the wheel, checks it carries the migrations, installs it into `work`/venv."""
    assert not work.resolve().is_relative_to(ROOT), work
    _uv("build", "--wheel", "--offline", "--out-dir", str(work / "dist"), cwd=ROOT)
    (wheel,) = (work / "dist").glob("canvas_steward-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for sql in (ROOT / "migrations").glob("*.sql"):
        assert f"steward/store/migrations/{sql.name}" in names, f"the wheel lacks {sql.name}"
    # The locked versions of the steward's dependencies (no dev tools), then the wheel: uv's
    # cache serves both, and the wheel's own requirements must be met by them.
    lock = work / "pylock.toml"
    _uv(
        "export",
        "--frozen",
        "--no-dev",
        "--no-emit-project",
        "--format",
        "pylock.toml",
        "--quiet",
        "-o",
        str(lock),
        cwd=ROOT,
    )
    _uv("venv", "--offline", "--quiet", "--python", sys.executable, str(work / "venv"), cwd=work)
    python = str(work / "venv" / "bin" / "python")
    _uv("pip", "install", "--offline", "--quiet", "--python", python, "-r", str(lock), cwd=work)
    _uv("pip", "install", "--offline", "--quiet", "--python", python, str(wheel), cwd=work)
    return work


def _outside_env(venv: Path, env: dict[str, str]) -> dict[str, str]:
    """The environment of a process that knows nothing of the repository or its venv."""
    clean = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT")}
    path = [p for p in clean.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT))]
    clean["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    return clean


def _imported_from(cwd: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """Where the environment's python finds the steward's code and its migrations."""
    script = "import steward.store.migrate as m; print(m.__file__); print(m.MIGRATIONS_DIR)"
    proc = subprocess.run(
        ["python", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    code, migrations = proc.stdout.split()
    return Path(code), Path(migrations)


def _spawn_steward(
    venv: Path, args: list[str], cwd: Path, env: dict[str, str], log: Path
) -> subprocess.Popen[bytes]:
    """The installed `steward ARGS` in a session of its own (stop_group signals it)."""
    return subprocess.Popen(
        [str(venv / "bin" / "steward"), *args],
        cwd=cwd,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


async def test_the_installed_wheel_joins_a_room_and_serves_a_prompt(
    installed: Path,
    livekit_server: LiveKitServer,
    fresh_db_url: str,
    room_name: str,
) -> None:
    venv = installed / "venv"
    cwd = installed / "join"
    cwd.mkdir()
    env = _outside_env(venv, steward_env(livekit_server, fresh_db_url))
    code, migrations = _imported_from(cwd, env)
    assert code.is_relative_to(venv), f"steward imported from {code}"
    assert migrations.is_relative_to(venv), f"migrations read from {migrations}"
    log = installed / "steward.log"
    proc = _spawn_steward(venv, ["join", room_name, "--no-http"], cwd, env, log)
    clients: list[HeadlessClient] = []
    try:
        await wait_for(lambda: "steward serving" in log.read_text(errors="replace"), timeout=90)
        clients = await join_clients(livekit_server, room_name, ["alice"])
        alice = clients[0]
        await wait_for(lambda: "canvas-steward" in alice.room.remote_participants, timeout=20)
        sid = await prompt_until_accepted(alice, "draw a flow chart of signup with six steps")
        await wait_for(lambda: alice.announced_last_seq(sid) > 0, timeout=60)
        last = alice.announced_last_seq(sid)
        await wait_for(lambda: alice.applied_seq(sid) == last, timeout=30)
        kinds = [s["type"] for s in alice.shapes.values()]
        assert kinds.count("geo") >= 3 and "arrow" in kinds, kinds
    finally:
        await close_all(clients)
        await stop_group(proc)
    assert proc.returncode == 0, log.read_text(errors="replace")[-3000:]
    # The wheel's own migrations made the schema.
    conn = await asyncpg.connect(fresh_db_url)
    try:
        applied = await conn.fetchval("SELECT count(*) FROM schema_migrations")
    finally:
        await conn.close()
    assert applied == len(list((ROOT / "migrations").glob("*.sql")))
    # Nothing of the run landed in the installed package.
    assert not list(venv.glob("lib/python*/site-packages/.data"))


async def test_the_installed_wheel_runs_a_worker_that_serves_a_dispatched_room(
    installed: Path,
    livekit_server: LiveKitServer,
    fresh_db_url: str,
    room_name: str,
) -> None:
    venv = installed / "venv"
    cwd = installed / "worker"
    cwd.mkdir()
    agent = "steward-wheel"
    env = _outside_env(venv, steward_env(livekit_server, fresh_db_url, STEWARD_AGENT_NAME=agent))
    log = installed / "worker.log"
    proc = _spawn_steward(venv, ["worker"], cwd, env, log)
    lk = api.LiveKitAPI(
        livekit_server.url.replace("ws://", "http://"),
        livekit_server.api_key,
        livekit_server.api_secret,
    )
    clients: list[HeadlessClient] = []
    try:
        # livekit-agents warms up slowly on a busy machine.
        await wait_for(lambda: "registered worker" in log.read_text(errors="replace"), 120, 0.2)
        clients = await join_clients(livekit_server, room_name, ["bea"])
        bea = clients[0]
        await lk.agent_dispatch.create_dispatch(
            api.CreateAgentDispatchRequest(agent_name=agent, room=room_name)
        )
        await wait_for(lambda: "canvas-steward" in bea.room.remote_participants, timeout=60)
        sid = await prompt_until_accepted(bea, "draw a box")
        assert await bea.wait_status(sid, timeout=30) == "done"
        assert any(s["type"] == "geo" for s in bea.shapes.values()), bea.shapes
        assert proc.poll() is None, "the worker exited"
    finally:
        await close_all(clients)
        await lk.aclose()
        await stop_group(proc)
