"""Drones see their neighbours, over the real stack: livekit-server, Postgres, the steward
serving the demo page, a Chromium tab on it (driven by `client-bridge/bench/tabs.mjs`, which
also pans it), a headless user who asks for a project, and the `anthropic:` provider against
the local Messages server.

The orchestrator plans two tasks side by side; the left drone draws a red box filling its
area; the right drone reviews its area until the low-detail image of the area around its task
shows red where the left task is, then draws. So the right drone's last request must carry two
images (its task area, and around it), the second showing the left task's shape in Chromium's
pixels, with a caption naming the area and the left task.
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

from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.anthropic_fake import FakeAnthropic, StartFake
from tests.support.room import close_all, join_clients
from tests.support.tabs import Tabs, served_tabs

pytestmark = pytest.mark.integration

# The two task areas, in the model's coordinates: side by side, 40 px apart.
LEFT = {"x": 0, "y": 0, "w": 400, "h": 300}
RIGHT = {"x": 440, "y": 0, "w": 400, "h": 300}
# Where the right task's area-around image is (its area grown by 0.75 × 400 = 300 px each
# side: x 140 to 1140, y -300 to 600), and where the left drone's red box shows in it.
# Both task areas together, with a margin of 5% of their larger side (42 px).
AROUND_RIGHT = {"x": -42, "y": -42, "w": 924, "h": 384}
RED_BOX = {"x": 20, "y": 20, "w": 360, "h": 260}


def _texts(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def _images(body: dict[str, Any]) -> list[bytes]:
    content = body["messages"][0]["content"]
    return [base64.b64decode(b["source"]["data"]) for b in content if b.get("type") == "image"]


def _mode(body: dict[str, Any]) -> str:
    system = body["system"] if isinstance(body["system"], str) else body["system"][0]["text"]
    m = re.search(r"# Canvas agent \(([a-z-]+)\)", system)
    return m.group(1) if m else ""


def _red_at(image: bytes, x: float, y: float) -> bool:
    r, g, b = Image.open(io.BytesIO(image)).convert("RGB").getpixel((int(x), int(y)))  # type: ignore[misc]
    return bool(r > 150 and r > g + 60 and r > b + 60)


def _left_red_in_around(image: bytes) -> bool:
    """Whether the image around the right task shows the left box's red, where it is."""
    img = Image.open(io.BytesIO(image))
    scale = img.width / AROUND_RIGHT["w"]
    x = (RED_BOX["x"] + RED_BOX["w"] / 2 - AROUND_RIGHT["x"]) * scale  # the red box's middle
    y = (RED_BOX["y"] + RED_BOX["h"] / 2 - AROUND_RIGHT["y"]) * scale
    return _red_at(image, x, y)


def _act(*actions: dict[str, Any]) -> str:
    return ",".join(json.dumps(a) for a in actions) + "]}"  # continues the prefilled opening


def respond(body: dict[str, Any]) -> str:
    text, mode = _texts(body), _mode(body)
    if mode == "orchestrating-active":
        if "[left]" not in text:
            free = re.search(r"Fairies free to help: ([\w, -]+)", text)
            assert free is not None, text[:2000]
            one, two = [f.strip() for f in free.group(1).split(",")][:2]
            return _act(
                {"_type": "start-project", "title": "Two boxes", "plan": "left, right"},
                {
                    "_type": "create-project-task",
                    "taskId": "left",
                    "title": "Left box",
                    "text": "a red box",
                    **LEFT,
                    "assignee": one,
                },
                {
                    "_type": "create-project-task",
                    "taskId": "right",
                    "title": "Right box",
                    "text": "a blue box",
                    **RIGHT,
                    "assignee": two,
                },
                {"_type": "direct-to-start-project-task", "taskId": "left", "fairyId": one},
                {"_type": "direct-to-start-project-task", "taskId": "right", "fairyId": two},
                {"_type": "await-tasks-completion", "taskIds": ["left", "right"]},
            )
        if text.count("(done,") >= 2:
            return _act({"_type": "end-project"}, {"_type": "message", "text": "Both boxes."})
        return _act({"_type": "await-tasks-completion", "taskIds": []})
    if mode == "working-drone":
        if "You are working on: [left]" in text:
            box = {"_type": "rectangle", "shapeId": "red-box", **RED_BOX}
            shape = {**box, "color": "red", "fill": "solid"}
            return _act(
                {"_type": "create", "intent": "the red box", "shape": shape},
                {"_type": "mark-my-task-done"},
            )
        images = _images(body)
        if len(images) == 2 and _left_red_in_around(images[1]):
            x, y = RIGHT["x"] + 20, RIGHT["y"] + 20
            shape = {
                "_type": "rectangle",
                "shapeId": "blue-box",
                "x": x,
                "y": y,
                "w": 360,
                "h": 260,
                "color": "blue",
                "fill": "solid",
            }
            return _act(
                {"_type": "create", "intent": "the blue box", "shape": shape},
                {"_type": "mark-my-task-done"},
            )
        return _act({"_type": "review", "intent": "wait for the left box", **RIGHT})
    return _act({"_type": "message", "text": "ok"})


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(respond=respond, chunk=64)


async def test_a_drones_request_shows_the_area_around_its_task_with_its_neighbours_shapes(
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
        model="anthropic:claude-neighbours-test",
        model_url=fake.base_url,
        tabs=["alice:1280x800"],
        out=tmp_path,
        steward_max_followups=8,
    ) as (service, runtime, tabs):
        clients: list[Any] = []
        try:
            await _project(tabs, livekit_server, service, runtime, room_name, fake, clients)
        finally:
            await close_all(clients)


async def _project(
    tabs: Tabs,
    livekit_server: LiveKitServer,
    service: StewardService,
    runtime: Any,
    room_name: str,
    fake: FakeAnthropic,
    clients: list[Any],
) -> None:
    # `pan` moves the tab's camera; the tab publishes the view it now shows.
    panned = await tabs("pan", "alice", "2000", "1000")
    view = panned["view"]
    assert panned["ok"] and abs(view["x"] + view["w"] / 2 - 2000) < 1, panned
    assert abs(view["y"] + view["h"] / 2 - 1000) < 1, panned

    def published() -> bool:
        v = runtime.views.get("alice")
        return v is not None and abs(v.viewport.x - view["x"]) < 1

    await wait_for(published, timeout=10)
    # Bob asks from a client that renders nothing: alice's Chromium tab renders every image.
    (bob,) = await join_clients(
        livekit_server, room_name, ["bob"], runtime, capabilities=("apply",)
    )
    clients.append(bob)
    reply = await bob.prompt("project: draw a red box and a blue box side by side")
    assert reply.session_id, reply.error
    assert service.fairies is not None
    board = service.fairies.rooms[room_name].board

    def ended() -> bool:
        return any(p.status == "done" for p in board.projects.values())

    try:
        await wait_for(ended, timeout=150, step=0.2)
    finally:
        said = [(_mode(b), len(_images(b)), _texts(b)[-300:]) for b in fake.requests]
        print(json.dumps(said, indent=1)[-6000:])  # shown when the test fails

    drones = [b for b in fake.requests if _mode(b) == "working-drone"]
    right = [b for b in drones if "You are working on: [right]" in _texts(b)]
    assert right, [_texts(b)[:300] for b in drones]
    last = right[-1]
    first_image, around = _images(last)  # its task area, then the area around it
    assert _left_red_in_around(around), "the left task's red box is in the image around"
    # The image is small (924 x 384 canvas units at 512 px); the first one is the task
    # area itself (400 x 300), still empty where the right drone draws.
    assert Image.open(io.BytesIO(around)).size == (512, 212)
    w, h = Image.open(io.BytesIO(first_image)).size
    assert abs(w / h - 4 / 3) < 0.02 and not _red_at(first_image, w / 2, h / 2)
    caption = next(t for t in _texts(last).split("\n") if "this image shows" in t)
    assert "this image shows x -42 to 882, y -42 to 342" in caption, caption
    assert '"Left box" (left, ' in caption and "low detail" in caption
    assert ") at x=0, y=0, w=400, h=300" in caption  # where that area is, in this frame
    assert "(x=440, y=0, w=400, h=300) lies within it" in caption
    # The drawing went on once it saw its neighbour: both boxes are on the canvas.
    assert {"red-box", "blue-box"} <= set(runtime.mirror.shapes)
