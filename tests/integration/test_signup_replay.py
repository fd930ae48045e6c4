"""The two-tab signup scenario answered by hand, replayed: the transcript in
docs/real-model/signup/ (a flow chart by alice, a red barn beside it by bob, a title and a
legend, a question, then blue boxes and the barn moved right) played by `replay:` in a real
room (LiveKit, Postgres, the steward, two headless clients) gives, prompt for prompt, the
canvas the hand-answered run ended with (final-canvas.json, as its tabs saved it), the same
on every client as in the steward's mirror, with clean quality reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from steward.canvas.styles import fill_to_model
from steward.config import PROJECT_ROOT
from steward.protocol.box import Box
from steward.store.database import Database
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.recorded_canvas import assert_same_canvas, facts, replayed_room
from tests.support.room import settle

pytestmark = pytest.mark.integration

SIGNUP = PROJECT_ROOT / "docs" / "real-model" / "signup"
CLEAN = ("unintended_overlaps", "overflowing_text", "loose_arrows", "locked_or_partial")
# The tabs' canvases as the recorded requests saw them; every chat's origin was (0, 0), so
# the model's coordinates are page coordinates. Bob's tab was narrowed for his barn and
# widened again before his question.
ALICE_VIEW = Box(x=0, y=0, w=959, h=800)
BOB_VIEW = Box(x=0, y=0, w=703, h=768)
BOB_NARROW = Box(x=0, y=0, w=339, h=768)
# (asker, prompt, model requests the run makes: a run that edits is reviewed once)
STEPS = [
    (
        "alice",
        "draw a flow chart of our signup: landing page, sign up form, verify email, welcome",
        2,
    ),
    ("bob", "draw a red barn with a door and two windows to the right of the flow chart", 2),
    (
        "alice",
        'add a title "Signup flow" above the chart and a small legend explaining the colours',
        2,
    ),
    ("bob", "what is on the canvas right now?", 1),
    ("alice", "make the flow chart boxes blue and move the barn a bit further right", 2),
]


async def _run(
    runtime: Any, asker: HeadlessClient, clients: list[HeadlessClient], prompt: str
) -> dict[str, Any]:
    reply = await asker.prompt(prompt)
    assert reply.session_id, reply.error
    assert await asker.wait_status(reply.session_id, timeout=30) == "done"
    if runtime.broadcaster.stats(reply.session_id).last_seq > 0:
        await settle(runtime, clients, reply.session_id)
    done = await runtime.sessions.wait(reply.session_id, timeout=10)
    return dict(done.summary)


def _width(runtime: Any, identity: str) -> float | None:
    view = runtime.views.get(identity)
    return None if view is None else float(view.viewport.w)


async def test_the_signup_transcript_replays_to_the_same_canvas(
    livekit_server: LiveKitServer, database: Database, tmp_path: Path
) -> None:
    views = {"alice": ALICE_VIEW, "bob": BOB_VIEW}
    async with replayed_room(livekit_server, database, SIGNUP, tmp_path, views) as replay:
        runtime, clients = replay.runtime, replay.clients
        alice, bob = clients
        barn_x: float | None = None
        for step, (who, prompt, requests) in enumerate(STEPS):
            if step == 1:  # bob narrowed his tab before asking for the barn
                await bob.set_view(BOB_NARROW)
                await wait_for(lambda: _width(runtime, "bob") == BOB_NARROW.w)
            if step == 3:
                await bob.set_view(BOB_VIEW)
                await wait_for(lambda: _width(runtime, "bob") == BOB_VIEW.w)
            asker = alice if who == "alice" else bob
            summary = await _run(runtime, asker, clients, prompt)
            # As many model requests as the recorded run made: one, plus one review.
            assert 1 + summary["follow_ups"] == requests, (step, summary)
            quality = summary["quality"]
            assert isinstance(quality, dict)
            # Bob's barn lies right of his narrow view (outside_viewport), as recorded.
            assert all(quality[k] == 0 for k in (*CLEAN, "outside_bounds")), (step, quality)
            if step == 1:
                barn_x = float(runtime.mirror.shapes["barn-body"]["x"])
        # The runs made as many requests as the transcript has answers: every one played.
        answers = (SIGNUP / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
        assert sum(r for *_, r in STEPS) == len(answers) == 9
        shapes = runtime.mirror.shapes
        assert_same_canvas(shapes, SIGNUP / "final-canvas.json")
        chart = ("landing-page", "signup-form", "verify-email", "welcome")
        assert {shapes[k]["props"]["color"] for k in chart} == {"blue"}
        arrows = [s for s in shapes.values() if s["type"] == "arrow"]
        assert len(arrows) == 3 and all(len(a.get("bindings") or {}) == 2 for a in arrows)
        assert facts(shapes["chart-title"])["text"] == "Signup flow"
        body = shapes["barn-body"]["props"]
        assert (body["color"], fill_to_model(body["fill"])) == ("red", "solid")
        assert barn_x is not None and shapes["barn-body"]["x"] == barn_x + 100
        for client in clients:
            assert client.shapes == shapes, client.identity
