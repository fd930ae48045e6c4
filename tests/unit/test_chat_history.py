"""The chat history part: the response format, summaries, other askers' runs, the bound."""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState
from steward.actions.registry import ACTIONS, process
from steward.canvas.coords import CoordinateSpace
from steward.config import Settings
from steward.fairies.memory import (
    HistoryItem,
    action_item,
    chat_items,
    feedback_item,
    prompt_item,
)
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.model.base import ModelRequest
from steward.model.scripted import ScriptedModel
from steward.ports import PromptInput
from steward.prompt.parts.chat_history import (
    BUDGET_CHARS,
    LINE_CHARS,
    keep_bounded,
    render_action,
    render_history,
    thread_for,
)
from steward.prompt.state import ChatItem
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemorySession


def _create(sid: str, x: float = 0) -> dict[str, Any]:
    """A create action as the steward keeps it after sanitizing (with its own `_id`)."""
    return {
        "_type": "create",
        "intent": f"box {sid}",
        "shape": {"_type": "rectangle", "shapeId": sid, "x": x, "y": 0, "w": 50, "h": 50},
        "_id": sid,
    }


def _fairy_history(n: int) -> list[HistoryItem]:
    items = [
        prompt_item("draw a fenced farm with a barn", "project", "user"),
        action_item(
            "start-project",
            {"title": "Farm", "description": "a farm", "plan": "barn left, fence around it"},
            "project",
        ),
    ]
    for k in range(n):
        items.append(action_item("create", _create(f"s{k}", k * 60), "project"))
        if k % 2 == 1:  # short runs: every action is a line of its own
            items.append(
                action_item("message", {"_type": "message", "text": f"row {k}"}, "project")
            )
        if k % 25 == 24:
            items.append(feedback_item(f"Feedback: shape s{k} overlaps", "project"))
    items.append(action_item("message", {"_type": "message", "text": "The barn is up."}, "project"))
    return items


def test_fairy_actions_read_as_the_model_writes_them_never_as_wire_json() -> None:
    item = action_item("create", _create("barn"), "task")
    assert item.model_text().startswith('{"_type":"create"')
    assert '"_id"' not in item.model_text() and '"params"' not in item.model_text()
    lines = render_history(chat_items([item], "task"))
    assert lines == [
        '[you] {"_type":"create","intent":"box barn","shape":{"_type":"rectangle",'
        '"shapeId":"barn","x":0,"y":0,"w":50,"h":50}}'
    ]


def test_first_request_and_plan_survive_200_items_within_the_bound() -> None:
    items = _fairy_history(200)
    assert len(items) > 200
    lines = render_history(chat_items(items, "project"))
    body = "\n".join(lines)
    assert lines[0] == "[someone asked] draw a fenced farm with a barn"
    assert lines[1].startswith('[you] {"_type":"start-project"') and "fence around it" in lines[1]
    assert len(body) <= BUDGET_CHARS + 2 * LINE_CHARS  # the bound, plus a digest line
    # The older middle is one digest; the newest items stay, in full, own messages included.
    digest = [ln for ln in lines if ln.startswith("[earlier")]
    assert len(digest) == 1 and "created" in digest[0] and "message(s) sent" in digest[0]
    assert lines[-1] == '[you] {"_type":"message","text":"The barn is up."}'
    assert '"_id"' not in body and '"params"' not in body and '"name":' not in body


def test_many_actions_of_one_kind_are_one_line_with_their_ids() -> None:
    items = [ChatItem("user", "draw twelve boxes", who="alice", run="r1")]
    items += [
        ChatItem("assistant", "create", action=_create(f"b{k}"), who="alice", run="r1")
        for k in range(12)
    ]
    lines = render_history(items, "alice")
    assert lines[1].startswith("[you, 12 actions] created 12 shape(s): b0, b1, b2")
    assert lines[1].endswith("b11")


def test_other_askers_runs_are_summarised_with_who_asked_what_and_what_was_done() -> None:
    items = [
        ChatItem("user", "draw a cat", who="bob", run="r1"),
        ChatItem("assistant", "create", action=_create("cat"), who="bob", run="r1"),
        ChatItem(
            "assistant",
            "message",
            action={"_type": "message", "text": "Here is a cat."},
            who="bob",
            run="r1",
        ),
        ChatItem("user", "make it bigger", who="alice", run="r2"),
    ]
    lines = render_history(items, "alice")
    assert (
        lines[0]
        == '[bob\'s run] asked "draw a cat"; created 1 shape(s): cat; said "Here is a cat."'
    )
    assert lines[1] == "[alice asked] make it bigger"
    # Seen by bob, the same run is his own: every action in full.
    assert '{"_type":"create"' in "\n".join(render_history(items, "bob"))


def test_a_run_sees_its_own_actions_and_messages_but_not_its_request_twice() -> None:
    items = [
        ChatItem("user", "draw a box", who="alice", run="r1"),
        ChatItem("assistant", "create", action=_create("box"), who="alice", run="r1"),
        ChatItem("assistant", "Done.", action={"_type": "message", "text": "Done."}, run="r1"),
    ]
    shown = thread_for(items, "r1")
    assert [i.text for i in shown] == ["create", "Done."]


def test_kept_history_drops_the_oldest_but_never_the_first_request() -> None:
    items = [ChatItem("user", f"ask {k}") for k in range(300)]
    keep_bounded(items, 200)
    assert len(items) == 200
    assert items[0].text == "ask 0" and items[1].text == "ask 101" and items[-1].text == "ask 299"


def _recording() -> CannedModel:
    """The scripted model's answers, keeping every request."""
    scripted = ScriptedModel(tokens_per_s=None)
    return CannedModel(answer=lambda request: scripted.response_text(request.hints))


def _history_text(request: ModelRequest) -> str:
    return next(
        (b["text"] for b in request.user if str(b.get("text", "")).startswith("Earlier")), ""
    )


async def test_a_review_follow_up_sees_what_the_run_did_and_said_before_it() -> None:
    model = _recording()
    agent = OneShotRunner(OneShotConfig(settings=Settings(steward_model="scripted"), model=model))
    session = MemorySession()
    said_first: list[str] = []
    prompt = PromptInput(message="draw a flow chart of our signup", source="browser", requester="a")
    assert await agent.run(session, prompt) == "done"
    assert len(model.requests) == 2  # the request and its review follow-up
    said_first = [t for _, t, partial in session.chats if not partial][:-1]
    history = _history_text(model.requests[1])
    assert "created" in history or '{"_type":"create"' in history
    assert said_first and all(t in history for t in said_first)
    assert "draw a flow chart of our signup" not in history  # the request is the messages part
    assert _history_text(model.requests[0]) == ""


def test_a_long_id_list_cut_in_one_action_says_how_many_more() -> None:
    ids = [f"fence-post-number-{k}" for k in range(17)]
    item = action_item("bringToFront", {"shapeIds": ids}, "task")
    line = item.model_text()
    assert '"fence-post-number-11"' in line and '"fence-post-number-12"' not in line
    assert '"… +5 more"' in line
    short = action_item("bringToFront", {"shapeIds": ids[:12]}, "task").model_text()
    assert "more" not in short


def test_a_pen_line_in_the_history_keeps_its_id_and_where_its_points_run() -> None:
    ctx = RunState(shapes={}, coords=CoordinateSpace(100, 0))
    points = [{"x": 0, "y": 0}, {"x": 300, "y": 0}, {"x": 300, "y": 200}, {"x": 20, "y": 210}]
    action = {"_type": "pen", "intent": "fence", "shapeId": "fence", "points": points}
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None and out.ops[0].params["x"] == 100  # drawn on the page, offset
    (line,) = render_history(chat_items([action_item("pen", out.data, "task")], "task"))
    assert '"shapeId":"fence"' in line
    # The summary is in the model's coordinates, as it wrote them.
    assert (
        '"points":{"count":4,"first":{"x":0,"y":0},"last":{"x":20,"y":210},'
        '"within":{"x":0,"y":0,"w":300,"h":210}}' in line
    )
    # Grouped with others, a pen is still named by its id.
    many = [ChatItem("assistant", "pen", action=dict(out.data, shapeId=f"p{k}")) for k in range(3)]
    assert "created 3 shape(s): p0, p1, p2" in render_history(many)[0]


def test_an_echo_survives_fields_of_the_wrong_kind() -> None:
    """A long action whose `shapeIds` is not a list (the model wrote junk beside a todo item)
    is still summed up: the history never stops a request from being built."""
    junk = {"_type": "update-todo-list", "id": 1, "status": "todo", "text": "x" * 700}
    many = {f"field{k}": "y" * 40 for k in range(20)}  # too long even clipped: summed up
    line = render_action({**junk, **many, "shapeIds": 40121927})
    assert line == "1 × update-todo-list"
