"""A run answered by hand, replayed: the smoke transcript in docs/real-model/smoke/ (one tab,
"draw a red circle", answered with a red ellipse and a message) played by `replay:` in a real
room (LiveKit, Postgres, the steward, a headless browser) gives the canvas the hand-answered
run gave, with a clean quality report."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from steward.config import PROJECT_ROOT
from steward.protocol.messages import Box
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.room import close_all, join_clients, room_settings, settle

pytestmark = pytest.mark.integration

SMOKE = PROJECT_ROOT / "docs" / "real-model" / "smoke" / "transcript.jsonl"
# The view of the tab the smoke run was answered in (its request said so).
VIEW = Box(x=0, y=0, w=703, h=700)
CLEAN = ("unintended_overlaps", "overflowing_text", "loose_arrows", "locked_or_partial")


async def test_the_smoke_transcript_replays_to_the_same_canvas(
    livekit_server: LiveKitServer, database: Database, tmp_path: Path
) -> None:
    transcript = tmp_path / "transcript.jsonl"  # replay counts turns per file: a fresh one
    shutil.copy(SMOKE, transcript)
    settings = room_settings(livekit_server, database.url, steward_model=f"replay:{transcript}")
    service = StewardService(settings, database=database)
    await service.start(http=False)
    room = f"by-hand-replay-{uuid.uuid4().hex[:6]}"
    try:
        runtime = await service.join(room)
        (alice,) = await join_clients(livekit_server, room, ["alice"], runtime)
        try:
            await alice.set_view(VIEW)
            await wait_for(lambda: runtime.views.get("alice") is not None)
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
        finally:
            await close_all([alice])
    finally:
        await service.close()
