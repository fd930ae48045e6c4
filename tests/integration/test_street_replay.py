"""The street scene answered by hand, replayed: the transcript in docs/real-model/street/
(alice's one-shot house, bob's project of three houses, two trees and a road, planned by an
orchestrator and drawn by two drones, then alice's one-shot edit of the crew's work) played
by `replay:` in a real room (LiveKit, Postgres, the steward, two headless clients) gives the
canvas the hand-answered run ended with (final-canvas.json), identical in both clients, with
a clean quality report. Each drone takes its own answers whatever order they ask in."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from steward.config import PROJECT_ROOT
from steward.protocol.messages import Box
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.recorded_canvas import assert_same_canvas
from tests.support.room import close_all, join_clients, room_settings

pytestmark = pytest.mark.integration

STREET = PROJECT_ROOT / "docs" / "real-model" / "street"
# The tabs' canvases as the recorded requests saw them (every chat's origin was (0, 0)).
ALICE_VIEW = Box(x=0, y=0, w=959, h=800)
BOB_VIEW = Box(x=0, y=0, w=703, h=768)
HOUSE = "draw a small red house with a door, two windows and a chimney"
PROJECT = (
    "project: draw a street scene: three houses side by side with a road in front of them "
    "and a tree between each pair of houses, to the right of the red house"
)
EDIT = "make all the doors on the street blue and add a yellow sun above the houses"
CLEAN = ("unintended_overlaps", "overflowing_text", "loose_arrows", "locked_or_partial")


def _settled(runtime: Any, clients: list[Any]) -> bool:
    return runtime.broadcaster.total_unacked() == 0 and all(
        c.shapes == runtime.mirror.shapes for c in clients
    )


async def test_the_street_transcript_replays_to_the_same_canvas(
    livekit_server: LiveKitServer, database: Database, tmp_path: Path
) -> None:
    transcript = tmp_path / "transcript.jsonl"  # replay counts turns per file: a fresh one
    shutil.copy(STREET / "transcript.jsonl", transcript)
    settings = room_settings(livekit_server, database.url, steward_model=f"replay:{transcript}")
    service = StewardService(settings, database=database)
    await service.start(http=False)
    room_id = f"street-replay-{uuid.uuid4().hex[:6]}"
    try:
        runtime = await service.join(room_id)
        clients = await join_clients(livekit_server, room_id, ["alice", "bob"], runtime)
        alice, bob = clients
        try:
            await alice.set_view(ALICE_VIEW)
            await bob.set_view(BOB_VIEW)
            await wait_for(lambda: runtime.views.get("alice") is not None)
            await wait_for(lambda: runtime.views.get("bob") is not None)

            house = await alice.prompt(HOUSE)
            assert house.session_id, house.error
            assert await alice.wait_status(house.session_id, timeout=30) == "done"

            reply = await bob.prompt(PROJECT)
            assert reply.session_id, reply.error
            assert service.fairies is not None
            room = service.fairies.rooms[room_id]
            await wait_for(
                lambda: (
                    bool(room.board.projects)
                    and all(p.status == "done" for p in room.board.projects.values())
                ),
                timeout=60,
            )
            (project,) = room.board.projects.values()
            tasks = room.board.project_tasks(project.id)
            assert len(tasks) == 6 and all(t.status == "done" for t in tasks)
            await wait_for(lambda: _settled(runtime, clients), timeout=20)
            print(service.fairies.project_summary(room_id))

            asked = await alice.prompt(EDIT)
            assert asked.session_id, asked.error
            assert await alice.wait_status(asked.session_id, timeout=30) == "done"
            done = await runtime.sessions.wait(asked.session_id, timeout=10)
            quality = done.summary["quality"]
            assert isinstance(quality, dict)
            assert all(quality[k] == 0 for k in CLEAN), quality

            shapes = runtime.mirror.shapes
            assert_same_canvas(shapes, STREET / "final-canvas.json")
            assert bob.shapes == alice.shapes == shapes
        finally:
            await close_all(clients)
    finally:
        await service.close()
