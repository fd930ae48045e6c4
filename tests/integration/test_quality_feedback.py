"""The quality report goes back to the model: a run draws two overlapping labelled boxes and an
arrow with a loose end, the lints of its follow-up request name both problems, and a model that
answers only from what the request says repairs them; the lints are the run's own (another
user's next request does not carry them). Through the real `anthropic:` provider against the
local Messages-streaming server, over a real room."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from steward.canvas.bounds import shape_bounds
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.support.anthropic_fake import FakeAnthropic, StartFake
from tests.support.room import close_all, join_clients, room_settings, settle

pytestmark = pytest.mark.integration


def _text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def respond(body: dict[str, Any]) -> str:
    """First turn: a careless drawing and a review. A turn whose prompt lists problems: fix
    exactly the ones it names."""
    text = _text(body)
    overlaps = re.findall(r"shapes '([^']+)' and '([^']+)' overlap", text)
    loose = re.findall(r"arrow '([^']+)' has a loose end", text)
    acts: list[dict[str, Any]] = []
    if overlaps or loose:
        for a, b in overlaps:
            acts.append(
                {
                    "_type": "place",
                    "intent": "out of the way",
                    "shapeId": b,
                    "referenceShapeId": a,
                    "side": "right",
                    "align": "start",
                    "sideOffset": 60,
                }
            )
        for sid in loose:
            acts.append({"_type": "delete", "intent": "loose arrow", "shapeId": sid})
        acts.append({"_type": "message", "text": f"Fixed {len(acts)} problem(s)."})
    elif "two boxes" in text:
        acts += [
            {
                "_type": "create",
                "intent": "box",
                "shape": {
                    "_type": "rectangle",
                    "shapeId": "qa-left",
                    "text": "Start",
                    "x": 100,
                    "y": 100,
                    "w": 200,
                    "h": 120,
                },
            },
            {
                "_type": "create",
                "intent": "box",
                "shape": {
                    "_type": "rectangle",
                    "shapeId": "qa-right",
                    "text": "End",
                    "x": 200,
                    "y": 150,
                    "w": 200,
                    "h": 120,
                },
            },
            {
                "_type": "create",
                "intent": "arrow",
                "shape": {
                    "_type": "arrow",
                    "shapeId": "qa-arrow",
                    "x1": 300,
                    "y1": 160,
                    "x2": 600,
                    "y2": 160,
                    "fromId": "qa-left",
                },
            },
            {"_type": "review", "intent": "check my work", "x": 0, "y": 0, "w": 800, "h": 500},
        ]
    else:
        acts.append({"_type": "message", "text": "Looks fine."})
    return ", ".join(json.dumps(a) for a in acts) + "]}"


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(respond=respond, chunk=13)


async def test_the_next_turn_sees_the_runs_problems_and_repairs_them(
    livekit_server: LiveKitServer, database: Database, room_name: str, fake: FakeAnthropic
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-qa",
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    (alice,) = await join_clients(livekit_server, room_name, ["alice"], runtime)
    try:
        reply = await alice.prompt("draw two boxes joined by an arrow")
        assert reply.session_id, reply.error
        assert await alice.wait_status(reply.session_id, timeout=30) == "done"
        await settle(runtime, [alice], reply.session_id)
        assert len(fake.requests) == 2  # the drawing, then the review it scheduled
        follow_up = _text(fake.requests[1])
        assert "shapes 'qa-left' and 'qa-right' overlap" in follow_up
        assert "arrow 'qa-arrow' has a loose end" in follow_up
        assert "overlap" not in _text(fake.requests[0])
        shapes = alice.shapes
        assert set(shapes) == {"qa-left", "qa-right"}
        left, right = (shape_bounds(shapes[i]) for i in ("qa-left", "qa-right"))
        assert not left.intersects(right)
        done = await runtime.sessions.wait(reply.session_id, timeout=10)
        quality = done.summary["quality"]
        assert isinstance(quality, dict)
        assert quality["unintended_overlaps"] == 0 and quality["loose_arrows"] == 0
    finally:
        await close_all([alice])
        await service.close()


def respond_and_leave(body: dict[str, Any]) -> str:
    """Alice's run draws a tree (crown over trunk: one drawing) and two labelled boxes over
    each other, then reviews; a turn told of problems leaves them; any other turn says so."""
    text = _text(body)

    def box(sid: str, x: int, y: int, w: int, h: int, label: str = "") -> dict[str, Any]:
        shape = {"_type": "rectangle", "shapeId": sid, "x": x, "y": y, "w": w, "h": h}
        return {"_type": "create", "intent": sid, "shape": {**shape, "text": label}}

    if "Problems your last actions left" in text:
        acts: list[dict[str, Any]] = [{"_type": "message", "text": "Leaving them as they are."}]
    elif "describe the canvas" in text:
        acts = [{"_type": "message", "text": "Two boxes and a tree."}]
    elif "boxes and a tree" in text:
        acts = [
            box("qa-left", 100, 100, 200, 120, "Start"),
            box("qa-right", 200, 150, 200, 120, "End"),
            {
                "_type": "create",
                "intent": "crown",
                "shape": {
                    "_type": "ellipse",
                    "shapeId": "tree-crown",
                    "x": 500,
                    "y": 100,
                    "w": 120,
                    "h": 100,
                    "color": "green",
                    "fill": "solid",
                },
            },
            box("tree-trunk", 545, 180, 30, 80),
            {"_type": "review", "intent": "check", "x": 0, "y": 0, "w": 800, "h": 500},
        ]
    else:
        acts = [{"_type": "message", "text": "Nothing to do."}]
    return ", ".join(json.dumps(a) for a in acts) + "]}"


@pytest.fixture
async def leaving_fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(respond=respond_and_leave, chunk=13)


async def test_a_runs_lints_go_to_its_own_next_request_not_to_another_users(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    leaving_fake: FakeAnthropic,
) -> None:
    fake = leaving_fake
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-qa",
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    alice, bob = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    try:
        reply = await alice.prompt("draw two boxes and a tree")
        assert reply.session_id, reply.error
        assert await alice.wait_status(reply.session_id, timeout=30) == "done"
        await settle(runtime, [alice, bob], reply.session_id)
        assert len(fake.requests) == 2  # the drawing, then the review it scheduled
        first, follow_up = (_text(r) for r in fake.requests)
        assert "Problems your last actions left" not in first
        assert "shapes 'qa-left' and 'qa-right' overlap" in follow_up
        assert "tree-" not in follow_up.split("Problems your last actions left")[1]
        # The overlap is still on the canvas; Bob's request is not told of Alice's run.
        assert shape_bounds(bob.shapes["qa-left"]).intersects(shape_bounds(bob.shapes["qa-right"]))
        other = await bob.prompt("describe the canvas please")
        assert other.session_id, other.error
        assert await bob.wait_status(other.session_id, timeout=30) == "done"
        assert len(fake.requests) == 3
        bobs = _text(fake.requests[2])
        assert "describe the canvas" in bobs
        assert "Problems your last actions left" not in bobs and "overlap" not in bobs
    finally:
        await close_all([alice, bob])
        await service.close()
