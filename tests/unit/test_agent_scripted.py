"""The one-shot agent with the scripted model over an in-memory session."""

from __future__ import annotations

from steward.canvas.bounds import shape_bounds
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.ports import PromptInput
from steward.protocol.box import Box
from steward_tools.memory_session import MemoryRoom, MemorySession


def agent(**kw: object) -> OneShotRunner:
    settings = Settings(steward_model="scripted", **kw)  # type: ignore[arg-type]
    return OneShotRunner(OneShotConfig(settings=settings, tokens_per_s=0))


def prompt(text: str) -> PromptInput:
    return PromptInput(message=text, source="browser", requester="alice")


async def test_flow_chart_builds_boxes_arrows_todo_and_reviews() -> None:
    session = MemorySession()
    outcome = await agent().run(session, prompt("draw a flow chart of our signup"))
    assert outcome == "done"
    shapes = session.browser.shapes
    geo = [s for s in shapes.values() if s["type"] == "geo"]
    arrows = [s for s in shapes.values() if s["type"] == "arrow"]
    assert len(geo) == 5 and len(arrows) == 4
    assert all(a["bindings"]["start"] and a["bindings"]["end"] for a in arrows)
    assert {s["props"]["text"] for s in geo} >= {"Sign-up form", "Verify email"}
    assert any(partial for partial, _ in session.envelopes)
    # review scheduled a follow-up request, which finished the todo list
    assert len(session.context_requests) == 2
    todo_ops = [a for _, env in session.envelopes for a in env if a.name == "todo"]
    assert all(i["status"] == "done" for i in todo_ops[-1].params["items"])  # type: ignore[union-attr]
    final_chats = [t for role, t, partial in session.chats if not partial]
    assert final_chats[-1].startswith("All done")
    assert ("done", None) in session.statuses


async def test_partial_action_ids_are_stable_and_final_reuses_them() -> None:
    session = MemorySession()
    await agent().run(session, prompt("draw a blue circle"))
    partial_ids = {a.id for partial, env in session.envelopes if partial for a in env}
    final_ids = {a.id for partial, env in session.envelopes if not partial for a in env}
    assert partial_ids and partial_ids <= final_ids
    (circle,) = session.browser.shapes.values()
    assert circle["props"]["geo"] == "ellipse" and circle["props"]["color"] == "blue"


async def test_cancel_reverts_in_flight_partial() -> None:
    session = MemorySession(cancel_after_envelopes=1)
    outcome = await agent().run(session, prompt("draw a red star"))
    assert outcome == "canceled"
    assert session.browser.shapes == {}  # the partial star was reverted
    assert session.browser.in_flight() == []
    assert ("canceled", None) in session.statuses


async def test_follow_ups_are_capped() -> None:
    session = MemorySession()
    outcome = await agent(steward_max_followups=0).run(
        session, prompt("draw a flow chart of checkout")
    )
    assert outcome == "done" and len(session.context_requests) == 1


async def test_existing_ids_are_renamed_not_overwritten() -> None:
    # The scripted model names its first drawing's circle `d1-ellipse-1`: taken already.
    existing = {
        "id": "d1-ellipse-1",
        "type": "geo",
        "x": 5,
        "y": 5,
        "rotation": 0,
        "props": {"geo": "rectangle", "w": 10, "h": 10},
    }
    session = MemorySession(MemoryRoom(shapes=[existing]))
    await agent().run(session, prompt("draw a circle"))
    assert set(session.browser.shapes) == {"d1-ellipse-1", "d1-ellipse-2"}
    assert session.browser.shapes["d1-ellipse-1"]["props"]["geo"] == "rectangle"


async def test_a_second_drawing_goes_into_free_space_in_the_viewport() -> None:
    session = MemorySession()
    a = agent()
    assert await a.run(session, prompt("draw a flow chart of our signup")) == "done"
    first = {k: shape_bounds(v) for k, v in session.browser.shapes.items()}
    assert await a.run(session, prompt("draw a flow chart of our signup")) == "done"
    second = [shape_bounds(v) for k, v in session.browser.shapes.items() if k not in first]
    assert len(second) == len(first)
    view = Box(0, 0, 1600, 900)
    assert all(view.contains(b) for b in second)
    assert not any(a.intersects(b) for a in first.values() for b in second)


async def test_a_one_shot_prompt_runs_as_its_askers_one_shotting_fairy() -> None:
    a = agent()
    session = MemorySession(room_id="room")
    await a.run(session, prompt("draw a flow chart of our signup"))
    room = await a.fairies.room("room")
    fairy = await a.fairy("room", "alice")
    assert fairy.fairy_id == "one-shot:alice" and fairy.asker == "alice"
    # Off the roster: no presence, never part of the crew.
    assert fairy.fairy_id not in room.roster.fairies
    # Its history, in the response format, each item with its run; its todo list.
    first = fairy.history[0]
    assert (first.kind, first.origin) == ("prompt", "user")
    assert first.text == "draw a flow chart of our signup"
    assert first.run == session.session_id
    names = [i.action["name"] for i in fairy.history if i.action is not None]
    assert "create" in names and "message" in names
    assert all(i.run == session.session_id for i in fairy.history)
    assert fairy.todo and all(t.status == "done" for t in fairy.todo)
    assert fairy.lent is None and fairy.session is None  # the prompt's session is given back


async def test_make_this_blue_recolours_the_askers_selection_only() -> None:
    boxes = [
        {
            "id": i,
            "type": "geo",
            "x": x,
            "y": 0,
            "rotation": 0,
            "props": {"geo": "rectangle", "w": 100, "h": 80, "color": "black"},
        }
        for i, x in (("a", 0), ("b", 300))
    ]
    session = MemorySession(MemoryRoom(shapes=boxes, selection=["b"]))
    assert await agent().run(session, prompt("make this blue")) == "done"
    colours = {k: v["props"]["color"] for k, v in session.browser.shapes.items()}
    assert colours == {"a": "black", "b": "blue"}
    nothing = MemorySession(MemoryRoom(shapes=boxes))
    assert await agent().run(nothing, prompt("make this blue")) == "done"
    assert {v["props"]["color"] for v in nothing.browser.shapes.values()} == {"black"}
    assert "select what you mean" in nothing.chats[-1][1].lower()  # asks, changes nothing
