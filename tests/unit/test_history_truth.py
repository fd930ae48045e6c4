"""History that tells what happened: the echo of an action is what was applied, in the
frame of the request reading it; moves, resizes and turns carry their boxes before and
after; counts of made shapes take in pens; runs are named for whom they were done."""

from __future__ import annotations

from typing import Any

from steward.actions.base import RunState
from steward.actions.registry import ACTIONS, process
from steward.canvas.coords import CoordinateSpace
from steward.fairies.memory import action_item, chat_items
from steward.prompt.parts.chat_history import render_history
from steward.prompt.state import ChatItem


def _box(sid: str, x: float, y: float, w: float, h: float) -> dict[str, Any]:
    props = {"geo": "rectangle", "w": w, "h": h}
    return {"id": sid, "type": "geo", "x": x, "y": y, "rotation": 0.0, "props": props}


def _echo(action: dict[str, Any], ctx: RunState, to: tuple[float, float]) -> str:
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None
    (line,) = render_history(
        chat_items([action_item(action["_type"], out.data, "task")], "task"), to=to
    )
    return line


def test_a_resize_echoes_scale_origin_and_the_boxes_before_and_after() -> None:
    shapes = {"a": _box("a", 10_100, 5_050, 200, 100), "b": _box("b", 10_400, 5_050, 100, 100)}
    ctx = RunState(shapes=shapes, coords=CoordinateSpace(10_000, 5_000))
    line = _echo(
        {"_type": "resize", "intent": "x", "shapeIds": ["a", "b"], "scaleX": 0.5, "scaleY": 0.5},
        ctx,
        (10_000, 5_000),
    )
    assert '"scaleX":0.5' in line and '"originX":300,"originY":100' in line  # their centre
    assert (
        '"before":{"a":{"x":100,"y":50,"w":200,"h":100},"b":{"x":400,"y":50,"w":100,"h":100}}'
        in line
    )
    assert (
        '"after":{"a":{"x":200,"y":75,"w":100,"h":50},"b":{"x":350,"y":75,"w":50,"h":50}}' in line
    )


def test_a_move_echo_read_in_another_frame_is_moved_into_it() -> None:
    shapes = {"a": _box("a", 10_100, 5_050, 200, 100)}
    ctx = RunState(shapes=shapes, coords=CoordinateSpace(10_000, 5_000))
    action = {"_type": "move", "intent": "x", "shapeId": "a", "x": 150, "y": 60}
    same = _echo(action, ctx, (10_000, 5_000))
    assert '"x":150,"y":60' in same and '"before":{"a":{"x":100,"y":50' in same
    # A request whose 0, 0 is 100 px right and 40 px down of the writer's reads it there.
    other = _echo(
        action, RunState(shapes=_fresh(), coords=CoordinateSpace(10_000, 5_000)), (10_100, 5_040)
    )
    assert '"x":50,"y":20' in other and '"before":{"a":{"x":0,"y":10' in other
    assert '"after":{"a":{"x":50,"y":20,"w":200,"h":100}}' in other


def _fresh() -> dict[str, Any]:
    return {"a": _box("a", 10_100, 5_050, 200, 100)}


def test_a_project_task_echoes_the_area_as_the_lead_wrote_it() -> None:
    ctx = RunState(shapes={}, coords=CoordinateSpace(40_000, -20_000))
    action = {
        "_type": "create-project-task",
        "taskId": "barn",
        "title": "Barn",
        "text": "a barn",
        "x": 30,
        "y": 40,
        "w": 400,
        "h": 300,
        "assignee": "fairy-2",
    }
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None and (out.data["_x"], out.data["_y"]) == (40_030, -19_960)
    (line,) = render_history(
        chat_items([action_item("create-project-task", out.data, "project")], "project"),
        to=(40_000, -20_000),
    )
    assert '"x":30,"y":40,"w":400,"h":300' in line and "40030" not in line


def test_made_shapes_count_pens_with_creates() -> None:
    def made(kind: str, sid: str) -> ChatItem:
        action = (
            {"_type": kind, "shapeId": sid}
            if kind == "pen"
            else {"_type": kind, "shape": {"shapeId": sid}}
        )
        return ChatItem("assistant", kind, action=action, who="bob", run="s-1")

    items = [made("create", "s0"), made("pen", "p"), made("create", "s1"), made("create", "s2")]
    (line,) = render_history(items, asker="alice")
    assert "created 4 shape(s): s0, p, s1, s2" in line


def test_runs_are_named_for_whom_they_were_done_and_the_askers_own_are_yours() -> None:
    def run(who: str, crew: bool, run_id: str) -> list[ChatItem]:
        return [
            ChatItem("user", "draw a farm", who=who, run=run_id, crew=crew),
            ChatItem(
                "assistant",
                "create",
                action={"_type": "create", "shape": {"shapeId": "b"}},
                who=who,
                run=run_id,
                crew=crew,
            ),
        ]

    items = run("alice", True, "crew-1") + run("bob", True, "crew-2") + run("bob", False, "s-1")
    lines = render_history(items, asker="alice")
    assert lines[0].startswith("[alice's project run] asked")  # hers: she asks now
    assert lines[1].startswith("[bob's project run] asked")
    assert lines[2].startswith("[bob's run] asked")
    assert not any("crew" in ln for ln in lines)
