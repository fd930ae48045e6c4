"""The street scene answered by hand, replayed: the transcript in docs/real-model/street/
(alice's one-shot house, bob's project of three houses, two trees and a road, planned by an
orchestrator and drawn by two drones, then alice's one-shot edit of the crew's work) played
by `replay:` in a real room (LiveKit, Postgres, the steward, two headless clients) gives the
canvas the hand-answered run ended with (final-canvas.json), identical in both clients, with
a clean quality report. Each drone takes its own answers whatever order they ask in."""

from __future__ import annotations

from pathlib import Path

import pytest

from steward.config import PROJECT_ROOT
from steward.protocol.box import Box
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.support.recorded_canvas import assert_same_canvas, finished_project, replayed_room

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


async def test_the_street_transcript_replays_to_the_same_canvas(
    livekit_server: LiveKitServer, database: Database, tmp_path: Path
) -> None:
    views = {"alice": ALICE_VIEW, "bob": BOB_VIEW}
    async with replayed_room(livekit_server, database, STREET, tmp_path, views) as replay:
        runtime, clients = replay.runtime, replay.clients
        alice, bob = clients
        house = await alice.prompt(HOUSE)
        assert house.session_id, house.error
        assert await alice.wait_status(house.session_id, timeout=30) == "done"

        reply = await bob.prompt(PROJECT)
        assert reply.session_id, reply.error
        tasks = await finished_project(replay, timeout=60)
        assert len(tasks) == 6 and all(t.status == "done" for t in tasks)

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
