"""A canvas a scenario run left in its browsers (tldraw records, as `by-hand tabs shapes`
saved them), compared with the steward's mirror after a replay of that run; and the room a
recorded transcript is replayed in."""

from __future__ import annotations

import contextlib
import json
import shutil
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steward.protocol.box import Box
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.room import close_all, converged, join_clients, room_settings

Shapes = dict[str, dict[str, Any]]
Binding = tuple[str, str, str]  # (arrow id, terminal, shape id)


def plain_text(node: Any) -> str:
    """The plain text of a tldraw rich-text document (or a plain string)."""
    if isinstance(node, str):
        return node
    if isinstance(node, dict):
        own = node.get("text")
        inner = "".join(plain_text(c) for c in node.get("content") or [])
        return (own if isinstance(own, str) else "") + inner
    return ""


def facts(shape: dict[str, Any]) -> dict[str, Any]:
    """What a user sees of a shape: kind, colour, fill, text (places are compared apart)."""
    p = shape.get("props") or {}
    return {
        "type": shape["type"],
        "geo": p.get("geo"),
        "color": p.get("color"),
        "fill": p.get("fill"),
        "text": plain_text(p.get("richText")) or plain_text(p.get("text")),
    }


def load(path: Path) -> tuple[Shapes, set[Binding]]:
    records = json.loads(path.read_text(encoding="utf-8"))
    shapes = {r["id"].removeprefix("shape:"): r for r in records if r.get("typeName") == "shape"}
    bindings = {
        (
            r["fromId"].removeprefix("shape:"),
            r["props"]["terminal"],
            r["toId"].removeprefix("shape:"),
        )
        for r in records
        if r.get("typeName") == "binding"
    }
    return shapes, bindings


def _close(a: Any, b: Any) -> bool:
    return abs(float(a) - float(b)) <= 1.0


def _points(value: Any) -> list[tuple[float, float]]:
    """A line's points in order, whether keyed by id (with an index) or listed."""
    items = (
        sorted(value.values(), key=lambda p: str(p.get("index", "")))
        if isinstance(value, dict)
        else list(value or [])
    )
    return [(float(p["x"]), float(p["y"])) for p in items]


def assert_same_canvas(shapes: Shapes, recorded: Path) -> None:
    """The replayed canvas is the recorded one: same ids, kinds, styles, texts, and places
    and sizes within 1 px (auto-sized text is as wide as the browser measured it)."""
    want, want_bindings = load(recorded)
    assert shapes and set(shapes) == set(want), sorted(set(shapes) ^ set(want))
    for sid, w in want.items():
        got = shapes[sid]
        assert facts(got) == facts(w), sid
        assert _close(got["x"], w["x"]) and _close(got["y"], w["y"]), (sid, got, w)
        gp, wp = got["props"], w["props"]
        for f in ("h",) if wp.get("autoSize") else ("w", "h"):
            if f in wp:
                assert _close(gp[f], wp[f]), (sid, f, gp[f], wp[f])
        for end in ("start", "end"):
            if end in wp:
                assert _close(gp[end]["x"], wp[end]["x"]) and _close(gp[end]["y"], wp[end]["y"])
        if "points" in wp:
            got_points, want_points = _points(gp["points"]), _points(wp["points"])
            assert len(got_points) == len(want_points), sid
            assert all(
                _close(a[0], b[0]) and _close(a[1], b[1])
                for a, b in zip(got_points, want_points, strict=True)
            ), (sid, got_points, want_points)
    got_bindings = {
        (sid, terminal, to)
        for sid, s in shapes.items()
        for terminal, to in (s.get("bindings") or {}).items()
        if to
    }
    assert got_bindings == want_bindings


@dataclass(frozen=True)
class ReplayRoom:
    """A started steward replaying a transcript, its room and the clients in it."""

    service: StewardService
    room_id: str
    runtime: RoomRuntime
    clients: list[HeadlessClient]


@contextlib.asynccontextmanager
async def replayed_room(
    livekit_server: LiveKitServer,
    database: Database,
    scenario: Path,
    tmp_path: Path,
    views: dict[str, Box],
) -> AsyncIterator[ReplayRoom]:
    """A steward whose model replays `scenario/transcript.jsonl`, joined to a fresh room with
    one headless client per entry of `views` (in order), each showing its view to the
    steward before the test starts; everything is closed after."""
    transcript = tmp_path / "transcript.jsonl"  # replay counts turns per file: a fresh one
    shutil.copy(scenario / "transcript.jsonl", transcript)
    settings = room_settings(livekit_server, database.url, steward_model=f"replay:{transcript}")
    service = StewardService(settings, database=database)
    await service.start(http=False)
    room_id = f"{scenario.name}-replay-{uuid.uuid4().hex[:6]}"
    try:
        runtime = await service.join(room_id)
        clients = await join_clients(livekit_server, room_id, list(views), runtime)
        try:
            for client in clients:
                await client.set_view(views[client.identity])
            await wait_for(lambda: all(runtime.views.get(i) is not None for i in views))
            yield ReplayRoom(service, room_id, runtime, clients)
        finally:
            await close_all(clients)
    finally:
        await service.close()


async def finished_project(replay: ReplayRoom, timeout: float = 60) -> list[Any]:
    """Waits until the room's fairy board has a project and every project on it is done; the
    tasks of its one project, then the clients' canvases converged with the mirror."""
    assert replay.service.fairies is not None
    board = replay.service.fairies.rooms[replay.room_id].board
    await wait_for(
        lambda: bool(board.projects) and all(p.status == "done" for p in board.projects.values()),
        timeout=timeout,
    )
    (project,) = board.projects.values()
    tasks = list(board.project_tasks(project.id))
    await converged(replay.runtime, replay.clients)
    print(replay.service.fairies.project_summary(replay.room_id))
    return tasks
