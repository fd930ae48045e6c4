"""A run answered by hand, replayed: the smoke transcript in docs/real-model/smoke/ (one tab,
"draw a red circle", answered with a red ellipse and a message) played by `replay:` in a real
room (LiveKit, Postgres, the steward, a headless browser) gives the canvas the hand-answered
run gave, with a clean quality report."""

from __future__ import annotations

from pathlib import Path

import pytest

from steward.config import PROJECT_ROOT
from steward.protocol.box import Box
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.support.recorded_canvas import replayed_room
from tests.support.room import settle

pytestmark = pytest.mark.integration

SMOKE = PROJECT_ROOT / "docs" / "real-model" / "smoke"
# The view of the tab the smoke run was answered in (its request said so).
VIEW = Box(x=0, y=0, w=703, h=700)
CLEAN = ("unintended_overlaps", "overflowing_text", "loose_arrows", "locked_or_partial")


async def test_the_smoke_transcript_replays_to_the_same_canvas(
    livekit_server: LiveKitServer, database: Database, tmp_path: Path
) -> None:
    async with replayed_room(livekit_server, database, SMOKE, tmp_path, {"alice": VIEW}) as replay:
        runtime = replay.runtime
        (alice,) = replay.clients
        reply = await alice.prompt("draw a red circle")
        assert reply.session_id, reply.error
        assert await alice.wait_status(reply.session_id, timeout=30) == "done"
        await settle(runtime, [alice], reply.session_id)
        done = await runtime.sessions.wait(reply.session_id, timeout=10)
        quality = done.summary["quality"]
        assert isinstance(quality, dict)
        assert all(quality[k] == 0 for k in CLEAN), quality
        (shape,) = alice.shapes.values()
        props = shape["props"]
        assert (shape["type"], props["geo"], props["color"]) == ("geo", "ellipse", "red")
        assert (shape["x"], shape["y"], props["w"], props["h"]) == (250, 250, 200, 200)
        assert alice.shapes == runtime.mirror.shapes
