"""One frame per request, over the real stack, far from the page's origin: livekit-server,
Postgres, the steward serving the demo page, a Chromium tab on it panned to x 48,000,
y -31,000 (`client-bridge/bench/tabs.mjs`), a headless user who asks for a project, and the
`anthropic:` provider against the local Messages server.

The lead plans three tasks in a row (in its own frame: x 0 to 1,240), directs two drones,
reviews; each drone draws a box in its area. Every request of every role is then read as a
model reads it: no number standing as a coordinate is a page one (tens of thousands), the
steward's own lines are whole numbers, the drones' task areas are the ones the lead wrote,
and the history's echo of the lead's plan is in the lead's frame.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.anthropic_fake import FakeAnthropic, StartFake
from tests.support.tabs import Tabs, served_tabs
from tests.unit.test_request_frame import _leaks, _unrounded

pytestmark = pytest.mark.integration

FAR = (48_000, -31_000)  # where alice's view is centred, on the page
# The three task areas, in the lead's (the crew's) frame.
AREAS = {
    "left": {"x": 0, "y": 0, "w": 400, "h": 300},
    "middle": {"x": 420, "y": 0, "w": 400, "h": 300},
    "right": {"x": 840, "y": 0, "w": 400, "h": 300},
}


def _texts(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def _mode(body: dict[str, Any]) -> str:
    system = body["system"] if isinstance(body["system"], str) else body["system"][0]["text"]
    m = re.search(r"# Canvas agent \(([a-z-]+)\)", system)
    return m.group(1) if m else ""


def _act(*actions: dict[str, Any]) -> str:
    return ",".join(json.dumps(a) for a in actions) + "]}"  # continues the prefilled opening


def respond(body: dict[str, Any]) -> str:
    text, mode = _texts(body), _mode(body)
    if mode == "orchestrating-active":
        if "[left]" not in text:
            free = re.search(r"Fairies free to help: ([\w, -]+)", text)
            assert free is not None, text[:2000]
            one, two = [f.strip() for f in free.group(1).split(",")][:2]
            who = {"left": one, "middle": two, "right": one}
            return _act(
                {"_type": "start-project", "title": "Three boxes", "plan": "a row of three"},
                *(
                    {
                        "_type": "create-project-task",
                        "taskId": tid,
                        "title": f"The {tid} box",
                        "text": f"a box filling the {tid} area",
                        **area,
                        "assignee": who[tid],
                    }
                    for tid, area in AREAS.items()
                ),
                {"_type": "direct-to-start-project-task", "taskId": "left", "fairyId": one},
                {"_type": "direct-to-start-project-task", "taskId": "middle", "fairyId": two},
                {"_type": "await-tasks-completion", "taskIds": ["left", "middle"]},
            )
        if text.count("(done,") >= 3:
            return _act({"_type": "end-project"}, {"_type": "message", "text": "Three boxes."})
        if (
            "[right]" in text
            and re.search(r"\[right\] \"[^\n]*\(todo,", text)
            and (text.count("(done,") >= 1)
        ):
            fairy = re.search(r"\[right\] \"[^\n]*assigned to ([\w-]+)", text)
            assert fairy is not None
            return _act(
                {
                    "_type": "direct-to-start-project-task",
                    "taskId": "right",
                    "fairyId": fairy.group(1),
                },
                {"_type": "await-tasks-completion", "taskIds": ["right"]},
            )
        return _act({"_type": "await-tasks-completion", "taskIds": []})
    if mode == "working-drone":
        task = re.search(r"You are working on: \[(\w+)\]", text)
        assert task is not None, text[-2000:]
        area = AREAS[task.group(1)]
        shape = {
            "_type": "rectangle",
            "shapeId": f"{task.group(1)}-box",
            "x": area["x"] + 20,
            "y": area["y"] + 20,
            "w": area["w"] - 40,
            "h": area["h"] - 40,
            "color": "blue",
            "fill": "tint",
        }
        return _act(
            {"_type": "create", "intent": "the box", "shape": shape},
            {"_type": "mark-my-task-done"},
        )
    return _act({"_type": "message", "text": "ok"})


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(respond=respond, chunk=64)


async def test_a_project_far_from_the_origin_reads_in_one_frame_in_every_request(
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
        model="anthropic:claude-frame-test",
        model_url=fake.base_url,
        tabs=["alice:1280x800"],
        out=tmp_path,
        steward_max_followups=8,
    ) as (service, runtime, tabs):
        await _run(tabs, service, runtime, room_name, fake)


async def _run(
    tabs: Tabs, service: StewardService, runtime: Any, room_name: str, fake: FakeAnthropic
) -> None:
    panned = await tabs("pan", "alice", str(FAR[0]), str(FAR[1]))
    view = panned["view"]
    assert panned["ok"], panned

    def published() -> bool:
        v = runtime.views.get("alice")
        return v is not None and abs(v.viewport.x - view["x"]) < 1

    await wait_for(published, timeout=10)
    # Alice asks for the project from her own tab: the crew's frame is her view's.
    reply = await tabs("prompt", "alice", "project: draw three boxes in a row", "--no-wait")
    assert reply.get("ok", True), reply
    fairies = service.fairies
    assert fairies is not None

    def board() -> Any:
        return fairies.rooms[room_name].board if room_name in fairies.rooms else None

    def ended() -> bool:
        b = board()
        return b is not None and any(p.status == "done" for p in b.projects.values())

    try:
        await wait_for(ended, timeout=180, step=0.2)
    finally:
        said = [(_mode(b), _texts(b)[-300:]) for b in fake.requests]
        print(json.dumps(said, indent=1)[-6000:])  # shown when the test fails
    room = fairies.rooms[room_name]
    assert room.origin is not None
    ox, oy = room.origin
    assert abs(ox - view["x"]) <= 1 and abs(oy - view["y"]) <= 1  # far from the origin
    # The tasks lie where the lead said, on the page: its frame plus the room's origin.
    for tid, area in AREAS.items():
        b = room.board.task(tid).bounds
        assert b is not None and (b.x, b.y) == (area["x"] + ox, area["y"] + oy), tid
    modes = [_mode(b) for b in fake.requests]
    assert modes.count("working-drone") >= 3 and "orchestrating-active" in modes
    for body in fake.requests:
        text = _texts(body)
        assert _leaks(text) == [], (_mode(body), _leaks(text)[:5])
        assert _unrounded(text) == [], (_mode(body), _unrounded(text)[:5])
    drones = [_texts(b) for b in fake.requests if _mode(b) == "working-drone"]
    for text in drones:
        task = re.search(r"You are working on: \[(\w+)\]", text)
        assert task is not None
        a = AREAS[task.group(1)]
        # The drone's area, in the frame the lead wrote it in.
        assert f"task area (x={a['x']}, y={a['y']}, w={a['w']}, h={a['h']})" in text
    reviews = [_texts(b) for b in fake.requests if _mode(b) == "orchestrating-active"][1:]
    assert reviews and all('"x":840,"y":0,"w":400,"h":300' in t for t in reviews)
    # On every canvas: the boxes where the drones drew them, far from the origin.
    box = runtime.mirror.shapes["middle-box"]
    assert (box["x"], box["y"]) == (ox + 440, oy + 20)
