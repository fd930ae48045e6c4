"""Fairy projects over a real livekit-server room and real Postgres, with headless clients.

- a whole scripted project: an orchestrator plans, two drones draw in parallel in their own
  sessions inside their bounds, every client ends with the same canvas as the mirror;
- two drones whose areas overlap: one cannot touch the other's shape, can draw in the
  overlap, and what it draws outside its area is clamped in;
- a drone's request lists its neighbour's finished drawing as blurry shapes;
- the steward (`uv run steward join ROOM`) is killed with SIGKILL mid-project, restarted,
  and the project finishes with no shape drawn twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from steward.canvas.bounds import shape_bounds
from steward.canvas.mirror import CanvasMirror
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelRequest, Usage
from steward.model.scripted.project_model import ScriptedProjectModel, drone_drawing
from steward.protocol.box import Box
from steward.protocol.messages import ActionEnvelope
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.store.database import Database
from steward.store.outbox import Outbox
from steward.turns.bounds_guard import belongs
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.drone_counts import by_task, planned_per_task
from tests.support.room import close_all, join_clients, room_settings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    settings = room_settings(
        livekit_server, database.url, steward_model="scripted", steward_scripted_tokens_per_s=4000
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    yield service
    await service.close()


def _fairies(service: StewardService) -> FairyRuntime:
    assert service.fairies is not None
    return service.fairies


async def _settled(runtime: RoomRuntime, clients: list[HeadlessClient]) -> None:
    """Every client applied everything the steward sent: all canvases equal the mirror."""
    await wait_for(
        lambda: (
            runtime.broadcaster.total_unacked() == 0
            and all(c.shapes == runtime.mirror.shapes for c in clients)
        ),
        timeout=20,
    )


def _task_shapes(shapes: dict[str, dict[str, Any]], task_id: str) -> list[dict[str, Any]]:
    return [s for sid, s in shapes.items() if sid.startswith(task_id + "-")]


async def test_a_whole_project_over_a_real_room(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    try:
        reply = await clients[0].prompt("project: draw a farm")
        assert reply.error is None and reply.session_id
        assert await clients[1].wait_status(reply.session_id, timeout=40) == "done"
        await _settled(runtime, clients)

        room = _fairies(steward).rooms[room_name]
        (project,) = room.board.projects.values()
        assert project.status == "done"
        tasks = room.board.project_tasks(project.id)
        assert len(tasks) >= 2 and all(t.status == "done" for t in tasks)
        assert len(project.members) == 2 and {t.assigned_to for t in tasks} == set(project.members)
        shapes = clients[0].shapes
        for t in tasks:
            assert t.bounds is not None
            mine = _task_shapes(shapes, t.id)
            assert len(mine) == planned_per_task(room.board)[t.id]
            assert all(belongs(shape_bounds(s, shapes), t.bounds) for s in mine), t.id
        assert len(shapes) == planned_per_task(room.board).total()
        assert clients[1].shapes == shapes == runtime.mirror.shapes

        # Each drone drew in a session of its own (own seq from 1), not the prompt's.
        rows = await runtime.deps.outbox.room_history(room_name)
        by_session: dict[str, list[int]] = {}
        drawn_in: dict[str, set[str]] = {}
        for row in rows:
            env = ActionEnvelope.model_validate_json(row.payload)
            by_session.setdefault(env.session_id, []).append(env.seq)
            for a in env.actions:
                if a.name == "create_shape":
                    drawn_in.setdefault(env.session_id, set()).add(a.params["id"].split("-")[1])
        assert reply.session_id not in drawn_in
        assert len(drawn_in) == 2 and sorted(map(len, drawn_in.values())) == [1, 1]
        for seqs in by_session.values():
            assert seqs == list(range(1, len(seqs) + 1))
        # Presence for the browsers to draw: three fairies, back to idling.
        presence = clients[0].fairies
        assert presence is not None and len(presence.fairies) == 3
        await wait_for(lambda: {f.mode for f in clients[1].fairies.fairies} == {"idling"})  # type: ignore[union-attr]
        summary = _fairies(steward).project_summary(room_name)
        assert summary is not None and summary["drones"] == 2 and summary["tasks"] == len(tasks)
    finally:
        await close_all(clients)


class Trespasser(ScriptedProjectModel):
    """fairy-3 (task part-2) waits for part-1's frame, then tries to delete and move it, draws
    in the overlap of the two areas, and draws one shape outside its own area."""

    def __init__(self, frame_ready: Callable[[], bool]) -> None:
        super().__init__(tokens_per_s=None)
        self.frame_ready = frame_ready

    def actions_for(self, hints: dict[str, Any]) -> list[dict[str, Any]]:
        acts = super().actions_for(hints)
        fairy = hints.get("fairy") or {}
        if fairy.get("fairy_id") != "fairy-3" or fairy.get("mode") != "working-drone":
            return acts
        b = fairy["task"]["bounds"]
        extra = [
            {"_type": "delete", "intent": "tidy", "shapeId": "part-1-frame"},
            {"_type": "move", "intent": "tidy", "shapeId": "part-1-frame", "x": 900, "y": 300},
            {
                "_type": "create",
                "intent": "seam",
                "shape": {
                    "_type": "rectangle",
                    "shapeId": "part-2-seam",
                    "x": b["x"] + 5,
                    "y": b["y"] + 100,
                    "w": 30,
                    "h": 30,
                    "color": "red",
                    "fill": "solid",
                },
            },
            {
                "_type": "create",
                "intent": "stray",
                "shape": {
                    "_type": "rectangle",
                    "shapeId": "part-2-stray",
                    "x": 100,
                    "y": 100,
                    "w": 50,
                    "h": 50,
                    "color": "red",
                    "fill": "none",
                },
            },
        ]
        return acts[:-1] + extra + acts[-1:]

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        fairy: dict[str, Any] = request.hints.get("fairy") or {}
        if fairy.get("fairy_id") == "fairy-3" and fairy.get("mode") == "working-drone":
            await wait_for(self.frame_ready, timeout=20)
        async for chunk in super().stream(request, usage):
            yield chunk


async def test_drones_with_overlapping_bounds_cannot_trample_each_other(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    fairies = _fairies(steward)

    def frame_ready() -> bool:
        room = fairies.rooms.get(room_name)
        return room is not None and "part-1-frame" in runtime.mirror.shapes

    model = Trespasser(frame_ready)
    fairies.deps.models = lambda *_: model
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    try:
        reply = await clients[0].prompt("draw a pond", fairy="orchestrator")
        assert reply.error is None and reply.session_id
        assert await clients[0].wait_status(reply.session_id, timeout=40) == "done"
        await _settled(runtime, clients)
        room = fairies.rooms[room_name]
        area1, area2 = (room.board.tasks[t].bounds for t in ("part-1", "part-2"))
        assert area1 is not None and area2 is not None
        assert area1.max_x > area2.x  # the two areas do overlap
        shapes = clients[0].shapes
        frame = shapes["part-1-frame"]
        assert belongs(shape_bounds(frame, shapes), area1)  # neither deleted nor moved
        assert not belongs(shape_bounds(frame, shapes), area2)
        seam = shape_bounds(shapes["part-2-seam"], shapes)
        assert belongs(seam, area1) and belongs(seam, area2)  # drawn in the overlap
        stray = shape_bounds(shapes["part-2-stray"], shapes)
        assert belongs(stray, area2) and stray.x == area2.x  # clamped: smallest shift inside
        feedback = " ".join(i.text for i in room.history_of("fairy-3"))
        assert feedback.count("outside your task bounds") >= 2
        assert clients[1].shapes == shapes == runtime.mirror.shapes
    finally:
        await close_all(clients)


class Neighbourly(ScriptedProjectModel):
    """The drone of part-2 holds its first turn until part-1 is done and leaves its task
    open, so its nudged second request is built while part-1's drawing stands next to it."""

    def __init__(self, part1_done: Callable[[], bool]) -> None:
        super().__init__(tokens_per_s=None)
        self.part1_done = part1_done
        self.part2_requests: list[ModelRequest] = []

    @staticmethod
    def _part2(request: ModelRequest) -> bool:
        fairy: dict[str, Any] = request.hints.get("fairy") or {}
        return (
            fairy.get("mode") == "working-drone" and (fairy.get("task") or {}).get("id") == "part-2"
        )

    def actions_for(self, hints: dict[str, Any]) -> list[dict[str, Any]]:
        acts = super().actions_for(hints)
        fairy = hints.get("fairy") or {}
        first = (fairy.get("task") or {}).get("id") == "part-2" and len(self.part2_requests) == 1
        return acts[:-1] if first and fairy.get("mode") == "working-drone" else acts

    async def stream(self, request: ModelRequest, usage: Usage) -> AsyncIterator[str]:
        if self._part2(request):
            self.part2_requests.append(request)
            if len(self.part2_requests) == 1:
                await wait_for(self.part1_done, timeout=20)
        async for chunk in super().stream(request, usage):
            yield chunk


async def test_a_drone_sees_its_neighbours_drawing_as_blurry_shapes(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    fairies = _fairies(steward)

    def part1_done() -> bool:
        room = fairies.rooms.get(room_name)
        task = room.board.tasks.get("part-1") if room is not None else None
        return task is not None and task.status == "done"

    model = Neighbourly(part1_done)
    fairies.deps.models = lambda *_: model
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    try:
        reply = await clients[0].prompt("draw a pond", fairy="orchestrator")
        assert reply.error is None and reply.session_id
        assert await clients[0].wait_status(reply.session_id, timeout=40) == "done"
        await _settled(runtime, clients)
        room = fairies.rooms[room_name]
        assert all(t.status == "done" for t in room.board.tasks.values())
        assert len(model.part2_requests) >= 2
        part1 = sorted(_task_shapes(runtime.mirror.shapes, "part-1"), key=lambda s: s["id"])
        assert part1
        texts = [str(b.get("text", "")) for b in model.part2_requests[1].user]
        around = next(t for t in texts if t.startswith("Around your task area"))
        listed = json.loads(around.split(" px of your area", 1)[1].split(":\n", 1)[1])
        mine = {r["shapeId"]: r for r in listed if r["task"] == "part-1"}
        assert set(mine) == {s["id"] for s in part1}  # drone 1's drawing, every shape
        frame = mine["part-1-frame"]
        ox, oy = room.origin or (0.0, 0.0)  # where it stands, in the model's coordinates
        b = shape_bounds(runtime.mirror.shapes["part-1-frame"], runtime.mirror.shapes)
        got = (frame["x"], frame["y"], frame["w"], frame["h"])
        assert got == pytest.approx((b.x - ox, b.y - oy, b.w, b.h), abs=1)
        assert not any(r["shapeId"].startswith("part-2-") for r in listed)  # its own: in view
        assert '"id":"part-1"' in around  # the neighbouring task and its area
    finally:
        await close_all(clients)


# -- kill -9 ----------------------------------------------------------------------------


def _spawn_steward(
    server: LiveKitServer, db_url: str, room: str, log: Path
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "LIVEKIT_URL": server.url,
        "LIVEKIT_API_KEY": server.api_key,
        "LIVEKIT_API_SECRET": server.api_secret,
        "DATABASE_URL": db_url,
        "STEWARD_MODEL": "scripted",
        "STEWARD_SCRIPTED_TOKENS_PER_S": "250",
        "STEWARD_LOG_FORMAT": "json",
        "STEWARD_CONTEXT_TIMEOUT_S": "1.0",
    }
    out = log.open("ab")
    # A session of its own: SIGKILL goes to the whole group (uv and the python it runs).
    return subprocess.Popen(
        ["uv", "run", "--frozen", "steward", "join", room, "--no-http"],
        cwd=ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


async def _outbox_replica(pool: asyncpg.Pool, room: str) -> CanvasMirror:
    replica = CanvasMirror()
    for row in await Outbox(pool).room_history(room):
        env = ActionEnvelope.model_validate_json(row.payload)
        for a in env.actions:
            replica.apply_one(a, partial=bool(env.partial), session=env.session_id)
    return replica


async def test_kill_9_mid_project_then_restart_finishes_it_without_duplicates(
    livekit_server: LiveKitServer, database: Database, room_name: str, tmp_path: Path
) -> None:
    log = tmp_path / "steward.log"
    pool = database.pool
    first = _spawn_steward(livekit_server, database.url, room_name, log)
    second: subprocess.Popen[bytes] | None = None
    clients: list[HeadlessClient] = []
    try:
        await wait_for(lambda: "steward serving" in log.read_text(errors="replace"), timeout=30)
        clients = await join_clients(livekit_server, room_name, ["alice", "bob"])
        await wait_for(lambda: all("canvas-steward" in c.room.remote_participants for c in clients))
        await asyncio.sleep(0)  # let the steward see both browsers' attributes
        reply = None
        for _ in range(50):  # the steward learns who may prompt from attributes: retry briefly
            reply = await clients[0].prompt("project: draw a farm")
            if reply.session_id:
                break
            await asyncio.sleep(0.1)
        assert reply is not None and reply.session_id, reply

        def drone_partial_in_flight() -> bool:
            shapes = clients[0].shapes
            drawn = [s for s in shapes if s.startswith("part-")]
            replica = clients[0].replica
            in_flight = set(replica.in_flight()) - set(replica.in_flight(reply.session_id))
            return len(drawn) >= 2 and bool(in_flight)

        await wait_for(drone_partial_in_flight, timeout=30, step=0.005)
        _kill(first)
        assert (
            await pool.fetchval(
                "SELECT count(*) FROM fairy_projects WHERE room_id = $1 AND status = 'active'",
                room_name,
            )
            == 1
        )

        second = _spawn_steward(livekit_server, database.url, room_name, log)

        async def project_done() -> bool:
            status = await pool.fetchval(
                "SELECT status FROM fairy_projects WHERE room_id = $1", room_name
            )
            return bool(status == "done")

        for _ in range(400):
            if await project_done():
                break
            await asyncio.sleep(0.1)
        assert await project_done(), log.read_text(errors="replace")[-3000:]

        events = [
            json.loads(line)
            for line in log.read_text(errors="replace").splitlines()
            if line.startswith("{")
        ]
        resumed = [e for e in events if e.get("event") == "fairies_resumed"]
        assert resumed[-1]["requests"] >= 2  # both drones' interrupted turns came back
        assert any(e.get("event") == "fairy_partials_reverted" for e in events)

        expected = await _outbox_replica(pool, room_name)
        await wait_for(lambda: all(c.shapes == expected.shapes for c in clients), timeout=20)
        shapes = clients[0].shapes
        assert clients[1].shapes == shapes
        tasks = await pool.fetch(
            "SELECT task_id, title, status, bounds::text AS b FROM fairy_tasks WHERE room_id = $1",
            room_name,
        )
        planned = Counter(
            {
                t["task_id"]: len(
                    drone_drawing(
                        {"id": t["task_id"], "title": t["title"], "bounds": json.loads(t["b"])}
                    )
                )
                for t in tasks
            }
        )
        # Every task's drawing exactly once: nothing drawn twice, nothing renamed.
        assert by_task(list(shapes)) == planned, list(shapes)
        assert not clients[0].replica.in_flight()  # every half-sent action ended
        for c in clients:
            assert c.stats.duplicates_applied == 0 and c.stats.out_of_order_applied == 0
        assert sorted(t["status"] for t in tasks) == ["done", "done"]
        for t in tasks:
            b = Box(**json.loads(t["b"]))
            mine = _task_shapes(shapes, t["task_id"])
            assert all(belongs(shape_bounds(s, shapes), b) for s in mine)
        for _ in range(100):  # the last turns (ending the project) finish just after it
            open_requests = await pool.fetchval(
                "SELECT count(*) FROM fairy_requests WHERE room_id = $1"
                " AND state IN ('pending', 'running')",
                room_name,
            )
            if open_requests == 0:
                break
            await asyncio.sleep(0.05)
        assert open_requests == 0
    finally:
        await close_all(clients)
        _kill(first)
        if second is not None:
            second.send_signal(signal.SIGTERM)
            try:
                second.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _kill(second)
