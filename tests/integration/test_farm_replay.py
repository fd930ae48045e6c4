"""The fenced-farm project answered by hand, replayed: the transcript in docs/real-model/farm/
(bob's project, planned by an orchestrator and drawn by two drones, then alice's one-shot
question) played by `replay:` in a real room (LiveKit, Postgres, the steward, two headless
clients) gives the canvas the hand-answered run ended with (final-canvas.json, as its tabs
saved it). The drones ask in whatever order they finish; each transcript line names the
fairy that asked, so each drone gets its own answers whatever the order."""

from __future__ import annotations

from pathlib import Path

import pytest

from steward.config import PROJECT_ROOT
from steward.protocol.box import Box
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.support.recorded_canvas import assert_same_canvas, finished_project, replayed_room

pytestmark = pytest.mark.integration

FARM = PROJECT_ROOT / "docs" / "real-model" / "farm"
# The tabs' canvases as the recorded requests saw them (every chat's origin was (0, 0)).
ALICE_VIEW = Box(x=0, y=0, w=959, h=800)
BOB_VIEW = Box(x=0, y=0, w=703, h=768)
PROJECT = (
    "project: draw a farm: a red barn with a fenced paddock around it, a farmhouse, "
    "two trees and a pond"
)
QUESTION = "move the pond below the farmhouse and make the trees green"
CLEAN = ("unintended_overlaps", "overflowing_text", "loose_arrows", "locked_or_partial")


async def test_the_farm_project_transcript_replays_to_the_same_canvas(
    livekit_server: LiveKitServer, database: Database, tmp_path: Path
) -> None:
    views = {"alice": ALICE_VIEW, "bob": BOB_VIEW}
    async with replayed_room(livekit_server, database, FARM, tmp_path, views) as replay:
        runtime, clients = replay.runtime, replay.clients
        alice, bob = clients
        reply = await bob.prompt(PROJECT)
        assert reply.session_id, reply.error
        tasks = await finished_project(replay, timeout=60)
        assert len(tasks) == 4 and all(t.status == "done" for t in tasks)

        asked = await alice.prompt(QUESTION)
        assert asked.session_id, asked.error
        assert await alice.wait_status(asked.session_id, timeout=30) == "done"
        done = await runtime.sessions.wait(asked.session_id, timeout=10)
        # The answer was a message: one request, nothing drawn.
        assert done.summary["follow_ups"] == 0 and done.summary["actions"] == 1
        quality = done.summary["quality"]
        assert isinstance(quality, dict)
        assert all(quality[k] == 0 for k in (*CLEAN, "outside_bounds")), quality

        shapes = runtime.mirror.shapes
        assert_same_canvas(shapes, FARM / "final-canvas.json")
        assert bob.shapes == alice.shapes == shapes
