"""Lints without false alarms, over the real stack: livekit-server, Postgres, the steward
serving the demo page, a Chromium tab on it (`client-bridge/bench/tabs.mjs`) that renders
every screenshot, a headless user who asks twice, and the `anthropic:` provider against the
local Messages server.

The first run lays a wide ground, two boxes and a level fence line. The second stands a
house on the ground, draws a path that winds between the two boxes (its bounding box covers
both) and crosses the fence, then reviews. The review's request must name exactly one
problem (the path crossing the fence): no house/ground overlap, no path/box overlap. Its
screenshot, rendered by Chromium, shows what the lints say: the house's red on the ground's
green, the two lines crossing where the lint says, the path clear of both boxes.
"""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.anthropic_fake import FakeAnthropic, StartFake
from tests.support.room import close_all, join_clients, settle
from tests.support.tabs import served_tabs

pytestmark = pytest.mark.integration

# The review area, in the first run's model coordinates: everything both runs draw.
REVIEW = {"x": 0, "y": 0, "w": 1200, "h": 600}
# The path: its box (x 160..340) covers both boxes' x ranges, its line passes between them
# and crosses the fence (y 60) at x 205.
PATH = [(160, 20), (250, 100), (250, 300), (340, 380)]
CROSSING = (205, 60)


def _text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def _images(body: dict[str, Any]) -> list[bytes]:
    content = body["messages"][0]["content"]
    return [base64.b64decode(b["source"]["data"]) for b in content if b.get("type") == "image"]


def _act(*actions: dict[str, Any]) -> str:
    return ",".join(json.dumps(a) for a in actions) + "]}"  # continues the prefilled opening


def _box(sid: str, x: int, y: int, w: int, h: int, color: str) -> dict[str, Any]:
    shape = {"_type": "rectangle", "shapeId": sid, "x": x, "y": y, "w": w, "h": h}
    return {"_type": "create", "intent": sid, "shape": {**shape, "color": color, "fill": "solid"}}


def respond(body: dict[str, Any], calls: list[int]) -> str:
    """Call 1 (the first run): ground, boxes, fence. Call 2 (the second run): house, path and
    a review. Any later call (the review's request): leave it."""
    calls.append(1)
    if len(calls) == 1:
        return _act(
            _box("ground", 0, 400, 1200, 160, "green"),
            _box("left-box", 100, 120, 100, 160, "blue"),
            _box("right-box", 300, 120, 100, 160, "blue"),
            {
                "_type": "pen",
                "intent": "fence",
                "shapeId": "fence",
                "points": [{"x": 20, "y": 60}, {"x": 500, "y": 60}],
                "style": "straight",
            },
            {"_type": "message", "text": "Ground, boxes and fence."},
        )
    if len(calls) == 2:
        return _act(
            _box("house", 700, 260, 200, 180, "red"),
            {
                "_type": "pen",
                "intent": "path",
                "shapeId": "path",
                "points": [{"x": x, "y": y} for x, y in PATH],
                "style": "straight",
            },
            {"_type": "review", "intent": "check", **REVIEW},
        )
    return _act({"_type": "message", "text": "Leaving it as it is."})


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    calls: list[int] = []
    return await start_fake_anthropic(respond=lambda body: respond(body, calls), chunk=64)


def _rgb(image: bytes, x: float, y: float) -> tuple[int, int, int]:
    img = Image.open(io.BytesIO(image)).convert("RGB")
    scale = img.width / REVIEW["w"]
    px = img.getpixel((int((x - REVIEW["x"]) * scale), int((y - REVIEW["y"]) * scale)))
    assert isinstance(px, tuple)
    return int(px[0]), int(px[1]), int(px[2])


def _dark(rgb: tuple[int, int, int]) -> bool:
    return max(rgb) < 110


def _dark_near(image: bytes, x: float, y: float, reach: int = 4) -> bool:
    return any(
        _dark(_rgb(image, x + dx, y + dy))
        for dx in range(-reach, reach + 1, 2)
        for dy in range(-reach, reach + 1, 2)
    )


async def test_a_review_names_only_the_real_crossing_and_its_screenshot_shows_it(
    livekit_server: LiveKitServer,
    database: Database,
    room_name: str,
    fake: FakeAnthropic,
    tmp_path: Path,
) -> None:
    async with served_tabs(
        livekit_server,
        database,
        room_name,
        model="anthropic:claude-lints-test",
        model_url=fake.base_url,
        tabs=["alice:1280x800"],
        out=tmp_path,
    ) as (_, runtime, _tabs):
        clients: list[Any] = []
        try:
            await _both_runs(livekit_server, runtime, room_name, fake, clients, tmp_path)
        finally:
            await close_all(clients)


async def _both_runs(
    livekit_server: LiveKitServer,
    runtime: Any,
    room_name: str,
    fake: FakeAnthropic,
    clients: list[Any],
    tmp_path: Path,
) -> None:
    # Alice's tab renders: it is the host once the steward knows it and what it offers.
    await wait_for(lambda: runtime.participants.host == "alice", timeout=20)
    # Bob asks from a client that renders nothing: alice's Chromium tab renders the image.
    (bob,) = await join_clients(
        livekit_server, room_name, ["bob"], runtime, capabilities=("apply",)
    )
    clients.append(bob)
    for prompt in ("lay the ground, two boxes and a fence", "stand a house on the ground"):
        reply = await bob.prompt(prompt)
        assert reply.session_id, reply.error
        assert await bob.wait_status(reply.session_id, timeout=60) == "done"
        await settle(runtime, [bob], reply.session_id)
    said = [(_text(b)[-400:], len(_images(b))) for b in fake.requests]
    assert len(fake.requests) == 3, json.dumps(said, indent=1)[-4000:]
    review = fake.requests[2]
    listed = _text(review).split("Problems your last actions left on the canvas:")
    assert len(listed) == 2, _text(review)[-3000:]
    problems = re.findall(r"^- (.+)$", listed[1].split("\n\n")[0], re.M)
    assert problems == [
        "strokes 'fence' and 'path' cross and were not drawn together; unless the request"
        " meant it, move or redraw yours so they do not"
    ], problems
    (shot,) = _images(review)[:1]
    (tmp_path / "review.png").write_bytes(shot)
    # What the lints say is what Chromium drew: the house's red on the ground's green,
    # a dark line where the path crosses the fence, and none where the path passes the
    # boxes (their blue stays clear at the box edges facing the path).
    r, g, b = _rgb(shot, 800, 350)
    assert r > 150 and r > g + 60, (r, g, b)
    r, g, b = _rgb(shot, 600, 480)
    assert g > r + 40 and g > b, (r, g, b)
    assert _dark_near(shot, *CROSSING)
    for x, y in ((195, 200), (305, 200)):  # inside each box, next to the path
        r, g, b = _rgb(shot, x, y)
        assert b > r + 40 and not _dark((r, g, b)), (x, y, (r, g, b))
