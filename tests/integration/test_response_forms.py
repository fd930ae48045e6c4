"""Response forms over the real stack: the real `anthropic:` provider streams, from the local
Messages server, answers a model gives in the shapes real models do — prose and a ```json
fence around the JSON, the prefilled opening repeated, an escaped emoji whose surrogate
halves arrive in different chunks, and a response cut by `max_tokens` mid-action. The model
answers only from the request: the ask, and the shapes listed in it. Every form must leave
the same canvas in both headless browsers and in the steward."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from steward.service import StewardService
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.anthropic_server import Reply, split_text
from steward_tools.rigs.request_text import RequestView, read_request
from tests.conftest import wait_for
from tests.support.anthropic_fake import FakeAnthropic, StartFake
from tests.support.room import close_all, join_clients, room_settings, settle

pytestmark = pytest.mark.integration

LABEL = "Next \U0001f600"
FORMS = ("fence", "repeat", "emoji", "cut")


def plan(view: RequestView) -> tuple[str, list[dict[str, Any]]]:
    """The ask's form and actions: a labelled box under the listed shape the ask names, that
    shape made solid. The model names the new box before creating it and, carelessly, writes
    a colour as a number."""
    ask = re.search(r"User request: (.+)", view.user)
    text = ask.group(1) if ask else ""
    form = re.search(r"Answer form: (\w+)", text)
    label = re.search(r'labelled "([^"]+)"', text)
    red = next((sid for sid in view.shapes if re.search(rf"\b{sid}\b", text)), None)
    if form is None or label is None or red is None:
        return "repeat", [{"_type": "message", "text": "I do not see that box."}]
    r = view.shapes[red]
    below = {
        "_type": "rectangle",
        "shapeId": "next-box",
        "x": r["x"],
        "y": r["y"] + r["h"] + 40,
        "w": r["w"],
        "h": r["h"],
        "color": "blue",
    }
    acts: list[dict[str, Any]] = [
        {"_type": "message", "text": f"Adding a box labelled {label.group(1)} under {red}."},
        {"_type": "label", "intent": "name it", "shapeId": "next-box", "text": label.group(1)},
        {"_type": "create", "intent": "the next step", "shape": below},
        {
            "_type": "update",
            "intent": "solid",
            "update": {"shapeId": red, "fill": "solid", "color": 7},
        },
    ]
    if form.group(1) == "cut":
        cut = {**below, "shapeId": "cut-box", "y": below["y"] + 200, "text": "never finished"}
        acts.append({"_type": "create", "intent": "one more", "shape": cut})
    return form.group(1), acts


def respond(body: dict[str, Any]) -> Reply:
    view = read_request(body)
    form, acts = plan(view)
    prefilled = view.prefill.rstrip().endswith("[")
    body_text = ", ".join(json.dumps(a, ensure_ascii=False) for a in acts) + "]}"
    if form == "fence":
        whole = json.dumps({"actions": acts}, ensure_ascii=False, indent=1)
        return Reply(split_text(f"Sure! Here is the plan:\n```json\n{whole}\n```\nDone.", 9))
    if form == "emoji":
        escaped = ", ".join(json.dumps(a) for a in acts) + "]}"
        # Every escaped emoji is cut between its two surrogate halves, the first half ending
        # a chunk long enough for the parser to show a partial version right there.
        pieces = re.split(r"(?=\\ude00)", escaped)
        assert len(pieces) > 2
        return Reply([c for p in pieces for c in [*split_text(p[:-12], 9), p[-12:]] if c])
    if form == "cut":
        text = body_text if prefilled else json.dumps({"actions": acts})
        end = text.index("never fin") + len("never fin")
        return Reply(split_text(text[:end], 9), stop_reason="max_tokens")
    return Reply(split_text(json.dumps({"actions": acts}, ensure_ascii=False), 9))


@pytest.fixture
async def fake(start_fake_anthropic: StartFake) -> FakeAnthropic:
    return await start_fake_anthropic(responder=respond)


RED_BOX = {
    "id": "red-box",
    "type": "geo",
    "x": 200,
    "y": 150,
    "rotation": 0,
    "props": {"geo": "rectangle", "w": 240, "h": 120, "color": "red", "fill": "none"},
}


async def test_each_response_form_gives_the_same_canvas(
    livekit_server: LiveKitServer, database: Database, room_name: str, fake: FakeAnthropic
) -> None:
    settings = room_settings(
        livekit_server,
        database.url,
        steward_model="anthropic:claude-forms-test",
        anthropic_base_url=f"http://127.0.0.1:{fake.port}",
        steward_max_followups=0,
    )
    service = StewardService(settings, database=database)
    await service.start(http=False)
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    alice, bob = clients
    try:
        results: dict[str, dict[str, Any]] = {}
        for form in FORMS:
            await alice.edit(put=[RED_BOX], remove=["next-box", "cut-box"])
            await wait_for(
                lambda: all(
                    c.shapes.get("red-box", {}).get("props", {}).get("fill") == "none"
                    and "next-box" not in c.shapes
                    for c in clients
                )
            )
            ask = f'Put a box labelled "{LABEL}" under red-box, fill it. Answer form: {form}'
            reply = await bob.prompt(ask)
            assert reply.session_id, reply.error
            assert await bob.wait_status(reply.session_id, timeout=30) == "done"
            await settle(runtime, clients, reply.session_id)
            assert alice.shapes == bob.shapes == runtime.mirror.shapes, form
            for c in clients:  # nothing is left half-applied, even after the cut
                assert c.replica.in_flight(reply.session_id) == [], (form, c.identity)
            shapes = dict(bob.shapes)
            red, new = shapes["red-box"], shapes["next-box"]
            # The label named before the create still lands; the bad colour is dropped.
            assert new["props"]["text"] == LABEL, form
            assert new["y"] > red["y"] + red["props"]["h"], form
            # The model's `solid` is tldraw's saturated `lined-fill`.
            assert red["props"]["color"] == "red", form
            assert red["props"]["fill"] == "lined-fill", form
            chats = [m for c in clients for m in c.chat if m.session_id == reply.session_id]
            assert all("\ufffd" not in m.text for m in chats), form
            finals = [m.text for m in chats if m.role == "assistant" and not m.partial]
            assert any(LABEL in t for t in finals), (form, finals)
            results[form] = {k: v for k, v in shapes.items() if k != "cut-box"}
        # Same response, four forms: the same canvas.
        first = results[FORMS[0]]
        assert all(results[f] == first for f in FORMS), {f: sorted(r) for f, r in results.items()}
        # The dropped colour is a note for that run's next request only: each form is a run
        # of its own with one request, so no later run is told about another's actions.
        notes = [read_request(r).user for r in fake.requests[1:]]
        assert notes and not any("color 7 is not a colour" in n for n in notes)
        assert len(fake.requests) == len(FORMS)
    finally:
        await close_all(clients)
        await service.close()
