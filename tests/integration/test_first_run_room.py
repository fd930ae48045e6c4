"""The first-run table (tests/support/first_run.py) over a real room: LiveKit, Postgres, the steward
with its default scripted model, and a headless browser whose view is not the origin. Every
sentence's canvas outcome is asserted on what the browser applied, and each run's quality
report (from `session_ended`) is clean."""

from __future__ import annotations

import copy
import uuid

import pytest

from steward.canvas.simple import model_type
from steward.protocol.box import Box
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.first_run import CASES, Case
from tests.support.room import close_all, join_clients, room_settings, settle

pytestmark = pytest.mark.integration

VIEW = Box(x=2000, y=500, w=1100, h=750)
CLEAN = ("unintended_overlaps", "overflowing_text", "loose_arrows", "locked_or_partial")


def _selection(view: object) -> list[str]:
    return list(getattr(view, "selection", ()))


async def _say(runtime: RoomRuntime, alice: HeadlessClient, text: str) -> list[str]:
    """One sentence from the browser: it ends done, everything applied, its quality clean."""
    chats = len(alice.chat)
    reply = await alice.prompt(text)
    assert reply.session_id, reply.error
    assert await alice.wait_status(reply.session_id, timeout=30) == "done"
    if runtime.broadcaster.stats(reply.session_id).last_seq:
        await settle(runtime, [alice], reply.session_id)
    done = await runtime.sessions.wait(reply.session_id, timeout=10)
    quality = done.summary["quality"]
    assert isinstance(quality, dict)
    assert all(quality[k] == 0 for k in CLEAN), (text, quality)
    return [m.text for m in alice.chat[chats:] if not m.partial]


async def _case(runtime: RoomRuntime, alice: HeadlessClient, case: Case) -> None:
    await alice.set_view(VIEW)
    await wait_for(lambda: runtime.views.get("alice") is not None)
    for text in case.before:
        await _say(runtime, alice, text)
    if case.select:
        chosen = [i for i, s in alice.shapes.items() if model_type(s) == case.select][:1]
        await alice.set_view(VIEW, chosen)
        await wait_for(lambda: _selection(runtime.views.get("alice")) == chosen)
    before = copy.deepcopy(alice.shapes)
    chats = await _say(runtime, alice, case.sentence)
    case.verify(before, copy.deepcopy(alice.shapes), chats)
    assert alice.shapes == runtime.mirror.shapes


async def test_every_first_run_sentence_in_a_real_room(
    livekit_server: LiveKitServer, database: Database
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="scripted",
        steward_scripted_tokens_per_s=20000.0,
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    try:
        for n, case in enumerate(CASES):  # a fresh room each: its `before` sentences only
            room = f"first-run-{n}-{uuid.uuid4().hex[:6]}"
            runtime = await service.join(room)
            (alice,) = await join_clients(livekit_server, room, ["alice"], runtime)
            try:
                await _case(runtime, alice, case)
            finally:
                await close_all([alice])
    finally:
        await service.close()
