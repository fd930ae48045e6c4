"""Whose view a run sees, over the real stack: two browsers with different viewports and
selections each prompt "make this <colour>" / "add a note here", through the real
`anthropic:` provider against the local Messages-streaming server. The model answers only
from the request the steward sent: the selection, viewport and user edits it shows."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from steward.ports import PromptInput
from steward.protocol.box import Box
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.anthropic_fake import FakeAnthropic, StartFake
from tests.support.room import close_all, join_clients, rectangle, room_settings, settle

pytestmark = pytest.mark.integration

COLOURS = ("red", "blue", "green", "orange", "violet", "yellow")
ALICE_VIEW = Box(x=0, y=0, w=1280, h=800)
BOB_VIEW = Box(x=3000, y=1000, w=1000, h=700)


def _texts(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def _after(label: str, text: str) -> Any:
    """The JSON value printed right after `label` (a line of its own or on the same line)."""
    m = re.search(re.escape(label) + r"\s*(.+)", text)
    return json.loads(m.group(1)) if m else None


def read_request(body: dict[str, Any]) -> dict[str, Any]:
    """What a model can learn from the request: the ask, the selection, the view, edits."""
    text = _texts(body)
    ask = re.search(r"User request: (.+)", text)
    return {
        "ask": ask.group(1).strip() if ask else None,
        "selected": [s["shapeId"] for s in _after("The user has selected:", text) or []],
        "viewport": _after("Your viewport (the user's view):", text),
        "edits": _after("Recent user edits:", text) or [],
        "note": "Whose view this is:" in text,
        "image": any(b.get("type") == "image" for b in body["messages"][0]["content"]),
    }


def respond(body: dict[str, Any]) -> str:
    """A model that knows only what the request says: recolour what it shows as selected,
    or put a note in the middle of the viewport it shows."""
    seen = read_request(body)
    ask = (seen["ask"] or "").lower()
    acts: list[dict[str, Any]] = []
    colour = next((c for c in COLOURS if re.search(rf"\b{c}\b", ask)), None)
    if colour and "this" in ask:
        for sid in seen["selected"]:
            acts.append(
                {
                    "_type": "update",
                    "intent": f"make it {colour}",
                    "update": {"shapeId": sid, "color": colour},
                }
            )
        said = f"Made {len(acts)} shape(s) {colour}." if acts else "Nothing is selected."
        acts.append({"_type": "message", "text": said})
    elif "note here" in ask and seen["viewport"]:
        v = seen["viewport"]
        acts.append(
            {
                "_type": "create",
                "intent": "a note where the user looks",
                "shape": {
                    "_type": "note",
                    "shapeId": "here-note",
                    "x": v["x"] + v["w"] // 2,
                    "y": v["y"] + v["h"] // 2,
                    "text": "here",
                    "color": "yellow",
                },
            }
        )
        acts.append({"_type": "message", "text": "Added a note."})
    else:
        acts.append({"_type": "message", "text": "Done."})
    return ", ".join(json.dumps(a) for a in acts) + "]}"  # continues the prefilled opening


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(respond=respond, chunk=11)


async def test_each_prompt_acts_on_its_askers_view_and_selection(
    livekit_server: LiveKitServer, database: Database, room_name: str, fake: FakeAnthropic
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-asker-test",
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_context_timeout_s=2.0,
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    alice, bob = clients
    try:
        assert runtime.participants.host == "alice"
        # Alice draws both boxes; each user looks at a different part of the canvas and
        # selects the box there.
        await alice.edit(
            put=[
                rectangle("left-box", 100, 100, color="black"),
                rectangle("right-box", 3300, 1200, color="black"),
            ]
        )
        await wait_for(lambda: all(len(c.shapes) == 2 for c in clients))
        await alice.set_view(ALICE_VIEW, ["left-box"])
        await bob.set_view(BOB_VIEW, ["right-box"])
        await wait_for(lambda: all(runtime.views.get(c.identity) for c in clients))

        async def run(client: Any, message: str, **kw: Any) -> dict[str, Any]:
            before = len(fake.requests)
            reply = await client.prompt(message, **kw)
            assert reply.session_id, reply.error
            assert await client.wait_status(reply.session_id) == "done"
            await settle(runtime, clients, reply.session_id)
            assert len(fake.requests) == before + 1
            return read_request(fake.requests[-1])

        # Bob's "this" is the box he selected, in his view, rendered by his own browser.
        seen = await run(bob, "make this blue")
        assert seen["selected"] == ["right-box"] and seen["image"] and not seen["note"]
        assert seen["edits"] == []  # bob changed nothing himself
        assert bob.context_bounds == [None] and alice.context_bounds == []
        # Alice's "this" is hers; her prompt also carries her own edits since.
        seen = await run(alice, "make this red")
        assert seen["selected"] == ["left-box"] and seen["image"]
        assert {e["id"]: e["change"] for e in seen["edits"]} == {
            "left-box": "created",
            "right-box": "created",
        }
        assert alice.context_bounds == [None] and bob.context_bounds == [None]
        for c in (alice, bob):
            assert c.shapes["right-box"]["props"]["color"] == "blue"
            assert c.shapes["left-box"]["props"]["color"] == "red"

        # "Here" is where the asker looks: bob's viewport, not the host's.
        seen = await run(bob, "add a note here")
        assert seen["viewport"]["w"] == BOB_VIEW.w and seen["viewport"]["h"] == BOB_VIEW.h
        note = bob.shapes["here-note"]
        assert BOB_VIEW.x <= note["x"] <= BOB_VIEW.x + BOB_VIEW.w
        assert BOB_VIEW.y <= note["y"] <= BOB_VIEW.y + BOB_VIEW.h

        # Bob's tab stops answering context: the host renders bob's published viewport,
        # and bob's published selection still says what "this" is.
        bob.faults.context_mode = "error"
        seen = await run(bob, "make this green")
        assert seen["selected"] == ["right-box"] and seen["image"] and not seen["note"]
        assert alice.context_bounds[-1] == BOB_VIEW
        assert all(c.shapes["right-box"]["props"]["color"] == "green" for c in clients)
        assert clients[0].shapes == clients[1].shapes == runtime.mirror.shapes
        # A selection named in the prompt itself wins over the view's.
        seen = await run(bob, "make this orange", selection=["left-box"])
        assert seen["selected"] == ["left-box"]
        assert all(c.shapes["left-box"]["props"]["color"] == "orange" for c in clients)

        # Bob says it instead (a final caption on his behalf): a spoken prompt from someone
        # with a tab open sees that tab's view and selection too.
        bob.faults.context_mode = "ok"
        known = set(runtime.sessions.sessions)
        await bob.room.local_participant.send_text(
            "Steward, make this violet",
            topic="lk.transcription",
            attributes={"lk.transcription_final": "true", "lk.segment_id": "SG_asker"},
        )
        await wait_for(lambda: len(set(runtime.sessions.sessions) - known) == 1, timeout=10)
        (sid,) = set(runtime.sessions.sessions) - known
        assert runtime.sessions.sessions[sid].prompt.source == "voice"
        assert await bob.wait_status(sid) == "done"
        await settle(runtime, clients, sid)
        seen = read_request(fake.requests[-1])
        assert seen["selected"] == ["right-box"] and not seen["note"]
        assert bob.context_bounds[-1] is None  # bob's own tab answered
        assert all(c.shapes["right-box"]["props"]["color"] == "violet" for c in clients)

        # No browser behind the prompt (HTTP): the host's view, no selection, and the
        # request says so; the model has nothing to recolour.
        sid = await runtime.run_prompt(
            PromptInput(message="make this yellow", source="http", requester="http")
        )
        assert await alice.wait_status(sid) == "done"
        seen = read_request(fake.requests[-1])
        assert seen["note"] and seen["selected"] == []
        assert "came over HTTP" in _texts(fake.requests[-1])
        colours = {k: runtime.mirror.shapes[k]["props"]["color"] for k in ("left-box", "right-box")}
        assert colours == {"left-box": "orange", "right-box": "violet"}
        # Every request carried the response schema's opening and a screenshot.
        assert all(r["messages"][-1]["content"].startswith("{") for r in fake.requests)
    finally:
        await close_all(clients)
        await service.close()


async def test_host_mode_the_askers_own_tab_reports_its_edits_once(
    livekit_server: LiveKitServer, database: Database, room_name: str, fake: FakeAnthropic
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-asker-test",
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_context_timeout_s=2.0,
        steward_apply_mode="host",
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    alice, bob = clients
    try:
        assert runtime.participants.host == "alice"
        # The app syncs documents itself: each user's edit lands in both canvases, and only
        # its author's tab counts it as a change of its own.
        alice.local_edit([rectangle("alice-box", 100, 100, color="black")])
        bob.local_edit([rectangle("bob-box", 3300, 1200, color="black")])
        alice.replica.load(
            [*alice.shapes.values(), rectangle("bob-box", 3300, 1200, color="black")]
        )
        bob.replica.load([*bob.shapes.values(), rectangle("alice-box", 100, 100, color="black")])
        await bob.set_view(BOB_VIEW, ["bob-box"])

        async def run(message: str) -> dict[str, Any]:
            reply = await bob.prompt(message)
            assert reply.session_id, reply.error
            assert await bob.wait_status(reply.session_id) == "done"
            await settle(runtime, [alice], reply.session_id)  # only the host applies
            return read_request(fake.requests[-1])

        seen = await run("make this blue")
        assert seen["edits"] == [{"id": "bob-box", "change": "created"}]  # not alice's
        assert seen["selected"] == ["bob-box"]
        assert alice.shapes["bob-box"]["props"]["color"] == "blue"
        assert alice.user_changes == {"alice-box": "created"}  # never asked: not the asker
        seen = await run("make this red")
        assert seen["edits"] == []  # the agent has seen them
        assert alice.shapes["bob-box"]["props"]["color"] == "red"
    finally:
        await close_all(clients)
        await service.close()
