"""The turn core every role runs (steward.turns.turn), over an in-memory session whose
canvas applies every send with the browsers' partial-action semantics."""

from __future__ import annotations

import json
from typing import Any

from steward.actions.base import RunState
from steward.actions.registry import Outcome, select
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.fairies.runtime import FairyRuntime
from steward.model.base import ModelRequest, Usage
from steward.ports import PromptInput
from steward.protocol.box import Box
from steward.turns.bounds_guard import BoundsGuard
from steward.turns.turn import NO_ACTION_NOTICE, Turn, TurnDriver, TurnHooks
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions


def body(*actions: dict[str, Any], close: bool = True) -> str:
    """The response after the prefilled `{"actions": [` opening."""
    text = ", ".join(json.dumps(a) for a in actions)
    return text + ("]}" if close else "")


def box(sid: str, x: int = 10, y: int = 10, w: int = 100, h: int = 50) -> dict[str, Any]:
    shape = {
        "_type": "rectangle",
        "shapeId": sid,
        "x": x,
        "y": y,
        "w": w,
        "h": h,
        "text": "a label long enough to stream in several partial versions",
    }
    return {"_type": "create", "intent": "a box", "shape": shape}


def turn_of(session: MemorySession, **hooks: Any) -> tuple[Turn, list[str]]:
    said: list[str] = []
    enabled = select(["create", "message", "think", "move", "fly-to-bounds"])
    h = TurnHooks(actions=lambda: enabled, said=said.append, **hooks)
    ctx = RunState(shapes=session.canvas.shapes)
    return Turn(session, ctx, 3, h), said


async def drive(session: MemorySession, text: str, **hooks: Any) -> tuple[str, Turn, list[str]]:
    turn, said = turn_of(session, **hooks)
    end = await TurnDriver().drive(turn, CannedModel([text]), ModelRequest([], []), Usage())
    return end, turn, said


async def test_wire_ids_are_session_request_index_and_partials_keep_theirs() -> None:
    session = MemorySession(session_id="sess")
    end, turn, _ = await drive(session, body(box("a"), box("b")))
    assert end == "done" and turn.actions_done == 2
    partial_ids = {a.id for partial, env in session.envelopes if partial for a in env}
    final_ids = [a.id for partial, env in session.envelopes if not partial for a in env]
    assert final_ids == ["sess.3.0", "sess.3.1"] and partial_ids <= set(final_ids)
    assert set(session.browser.shapes) == {"a", "b"} and session.browser.in_flight() == []


async def test_a_cut_stream_reverts_its_last_partial_with_a_final_think() -> None:
    session = MemorySession(session_id="s")
    text = body(box("a"), close=False)[:-30]  # max_tokens: the box never completes
    end, turn, _ = await drive(session, text)
    assert end == "done" and turn.actions_done == 0
    assert any(partial for partial, _ in session.envelopes)  # its preview did show
    last_partial, last = session.envelopes[-1]
    assert not last_partial and [(a.id, a.name) for a in last] == [("s.3.0", "think")]
    assert session.browser.shapes == {} and session.browser.in_flight() == []
    assert session.chats[-1] == ("system", NO_ACTION_NOTICE, False)


async def test_a_message_cut_off_or_unclosed_ends_final_and_is_remembered() -> None:
    session = MemorySession()
    # The text is complete in its last partial snapshot; the closing brace never comes.
    text = body({"_type": "message", "text": "Here is your drawing, all done"}, close=False)
    end, _, said = await drive(session, text[:-1])
    assert end == "done" and said == ["Here is your drawing, all done"]
    assert session.chats[-1] == ("assistant", "Here is your drawing, all done", False)
    assert [c for c in session.chats if not c[2]] == [session.chats[-1]]


async def test_prose_with_no_action_tells_the_user() -> None:
    session = MemorySession()
    end, turn, said = await drive(session, "I am sorry, I would rather describe it in words.")
    assert end == "done" and turn.actions_done == 0 and said == []
    assert session.chats == [("system", NO_ACTION_NOTICE, False)]
    assert session.envelopes == []


async def test_an_effect_that_ends_the_turn_stops_it_and_reverts_what_streams() -> None:
    session = MemorySession(session_id="s")
    seen: list[Outcome] = []

    async def effect(out: Outcome) -> bool:
        seen.append(out)
        return True

    text = body({"_type": "fly-to-bounds", "x": 1, "y": 2, "w": 30, "h": 40}, box("late"))
    end, _, _ = await drive(session, text, effect=effect)
    assert end == "ended" and [o.name for o in seen] == ["fly-to-bounds"]
    assert "late" not in session.browser.shapes and session.browser.in_flight() == []


async def test_the_bounds_guard_refuses_a_final_and_reverts_its_preview() -> None:
    session = MemorySession(session_id="s")
    guard = BoundsGuard(Box(0, 0, 200, 200))
    # Starts small (its preview passes), ends too big for the area: refused.
    await drive(session, body(box("big", w=150, h=50)), guard=guard)
    assert "big" in session.browser.shapes  # fits: kept
    session2 = MemorySession(session_id="t")
    huge = box("huge", w=150, h=50)
    huge["shape"]["h"] = 5000
    _, turn, _ = await drive(session2, body(huge), guard=guard)
    assert "huge" not in session2.browser.shapes and session2.browser.in_flight() == []
    (_, last) = session2.envelopes[-1]
    assert turn.refusals and [a.name for a in last] == ["think"]  # the preview reverted


async def test_a_refused_action_feeds_back_the_modes_reason() -> None:
    session = MemorySession()
    _, turn, _ = await drive(
        session,
        body({"_type": "clear"}, {"_type": "message", "text": "ok"}),
        refusal=lambda name: f"no {name} here",
    )
    assert turn.refusals == ["no clear here"] and turn.actions_done == 1


def agent(*texts: str) -> tuple[OneShotRunner, CannedModel]:
    model = CannedModel(list(texts), chunk=7)
    settings = Settings(steward_model="scripted", steward_max_followups=2)
    return OneShotRunner(OneShotConfig(settings=settings, model=model)), model


def ask(text: str) -> PromptInput:
    return PromptInput(message=text, source="browser", requester="alice")


async def test_set_my_view_moves_the_agents_view_not_the_users() -> None:
    a, model = agent(
        body({"_type": "setMyView", "intent": "look left", "x": -900, "y": 0, "w": 800, "h": 600}),
        body({"_type": "message", "text": "Seen it."}),
    )
    session = MemorySession()
    assert await a.run(session, ask("look to the left")) == "done"
    sent = [act.name for _, env in session.envelopes for act in env]
    assert "set_viewport" not in sent
    assert len(model.requests) == 2 and session.context_requests[1] is not None
    looked = session.context_requests[1]
    assert (looked.x, looked.w) == (-900, 800)


async def test_count_answers_as_data_in_the_next_request() -> None:
    a, model = agent(
        body({"_type": "count", "expression": "all"}),
        body({"_type": "message", "text": "There are two."}),
    )
    shapes = [
        {"id": f"s{i}", "type": "geo", "x": i * 200, "y": 0, "props": {"w": 10, "h": 10}}
        for i in range(2)
    ]
    session = MemorySession(MemoryRoom(shapes=shapes))
    assert await a.run(session, ask("how many shapes?")) == "done"
    second = json.dumps(model.requests[1].user)
    assert "count(all) = 2" in second
    last = (await a.fairy("room-1", "alice")).history[-1]
    assert last.action == {"name": "message", "params": {"text": "There are two."}}


async def test_a_fairy_gets_its_follow_ups_and_moves_only_its_own_view() -> None:
    browser = MemoryRoom()
    model = CannedModel(
        [
            body(
                {
                    "_type": "setMyView",
                    "intent": "look right",
                    "x": 2000,
                    "y": 0,
                    "w": 800,
                    "h": 600,
                },
                {"_type": "count", "expression": "all"},
            ),
            body({"_type": "message", "text": "Nothing over there."}),
        ],
        chunk=9,
    )
    runtime = FairyRuntime(
        sessions=MemorySessions(browser), models=lambda *_: model, crew=(("fairy-1", "drone"),)
    )
    lead = MemorySession(browser, room_id="view-room", fairy="lead")
    assert await runtime.run(lead, ask("what is to the right?")) == "done"
    room = runtime.rooms["view-room"]
    assert len(model.requests) == 2
    second = model.requests[1]
    assert all('"const":"setMyView"' in r.system[0] for r in model.requests)
    later = json.dumps(second.user)
    assert "count(all) = 0" in later and "You moved your view" in later
    assert room.fairy("fairy-1").view == Box(2000, 0, 800, 600)
    sent = [a.name for *_, actions in browser.sent for a in actions]
    assert "set_viewport" not in sent
    assert browser.chat[-1] == "Nothing over there."


async def test_entries_that_are_no_action_are_skipped_and_the_model_is_told() -> None:
    session = MemorySession(session_id="s")
    text = '"oops", null, ' + body(box("a"), {"_type": "message", "text": "Done."})
    end, turn, said = await drive(session, text)
    assert end == "done" and set(session.browser.shapes) == {"a"} and said == ["Done."]
    assert [n for n in turn.ctx.notes if "not an action object" in n] == [
        "entry 0 of the actions array is a string, not an action object; it was skipped",
        "entry 1 of the actions array is null, not an action object; it was skipped",
    ]
