"""The request is true, over the real stack (livekit-server, Postgres, headless browsers,
the `anthropic:` provider against the local Messages server): after the model moves its
view (`setMyView`) and then reviews an area, each next request's viewport text, "shapes in
your view" and the screenshot it asked the browser to render all describe that new area,
named for what it is; a selection someone else made earlier never rides along."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from steward.protocol.box import Box
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.anthropic_fake import FakeAnthropic, StartFake
from tests.support.room import close_all, join_clients, rectangle, room_settings

pytestmark = pytest.mark.integration

ALICE_VIEW = Box(x=0, y=0, w=1280, h=800)
MY_VIEW = Box(x=3000, y=1000, w=1000, h=700)
REVIEW = Box(x=3250, y=1150, w=300, h=200)


def _texts(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def _box(label: str, text: str) -> dict[str, Any] | None:
    """The box printed after `label` on its line."""
    m = re.search(re.escape(label) + r"\s*(\{.+\})", text)
    return json.loads(m.group(1)) if m else None


def _in_view(text: str) -> str:
    return text.split("Shapes in your view", 1)[1].split("Shapes outside", 1)[0]


def _box_of(b: Box) -> dict[str, float]:
    return {"x": b.x, "y": b.y, "w": b.w, "h": b.h}


def respond(body: dict[str, Any]) -> str:
    """First look right (setMyView), then review a part of it, then say what it saw."""
    history = body["messages"][0]["content"]
    text = "\n".join(b["text"] for b in history if b.get("type") == "text")
    if "You moved your view" not in text and "the area you asked to review" not in text:
        act = {"_type": "setMyView", "intent": "look right", **_box_of(MY_VIEW)}
    elif "your own view" in text:
        act = {"_type": "review", "intent": "check the box", **_box_of(REVIEW)}
    else:
        act = {"_type": "message", "text": "The right box is there."}
    return json.dumps(act) + "]}"  # continues the prefilled opening


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(respond=respond, chunk=13)


async def test_set_my_view_and_review_move_text_tiers_and_screenshot_together(
    livekit_server: LiveKitServer, database: Database, room_name: str, fake: FakeAnthropic
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-truth-test",
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_context_timeout_s=2.0,
        steward_max_followups=3,
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    alice, bob = clients
    try:
        await alice.edit(
            put=[
                rectangle("left-box", 100, 100, color="black"),
                rectangle("right-box", 3300, 1200, color="black"),
            ]
        )
        await alice.set_view(ALICE_VIEW, [])
        # Bob selected the right box earlier: that is his, not part of alice's prompt.
        await bob.set_view(MY_VIEW, ["right-box"])

        def shared() -> bool:
            return all(len(c.shapes) == 2 for c in clients) and all(
                runtime.views.get(c.identity) for c in clients
            )

        await wait_for(shared)
        reply = await alice.prompt("what is to the right of my view?")
        assert reply.session_id, reply.error
        assert await alice.wait_status(reply.session_id, timeout=40) == "done"
        assert len(fake.requests) == 3

        first, moved, reviewed = (_texts(b) for b in fake.requests[-3:])
        # 1: the asker's own view.
        assert _box("Your viewport (the user's view):", first) == _box_of(ALICE_VIEW)
        assert '"shapeId":"left-box"' in _in_view(first)
        assert "right-box" not in _in_view(first)
        # 2: after setMyView, the agent's own view: text, tiers and screenshot.
        label = "Your viewport (your own view, where you moved it):"
        assert _box(label, moved) == _box_of(MY_VIEW)
        assert _box("The user's view (not the area shown):", moved) == _box_of(ALICE_VIEW)
        assert '"shapeId":"right-box"' in _in_view(moved) and "left-box" not in _in_view(moved)
        # 3: the review area, for the review's request.
        assert _box("Your viewport (the area you asked to review):", reviewed) == _box_of(REVIEW)
        assert '"shapeId":"right-box"' in _in_view(reviewed)
        # The screenshots the steward asked alice's browser for were of those areas.
        assert alice.context_bounds[-3:] == [None, MY_VIEW, REVIEW]
        for body in fake.requests[-3:]:
            assert any(b.get("type") == "image" for b in body["messages"][0]["content"])
        # Bob's selection never rode along into alice's requests.
        assert all("The user has selected" not in t for t in (first, moved, reviewed))
    finally:
        await close_all(clients)
        await service.close()
