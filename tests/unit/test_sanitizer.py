"""Table tests: the model mistakes the starter kit notes list, and what we make of them."""

from __future__ import annotations

import math
from typing import Any

import pytest

from steward.actions.base import RunState
from steward.actions.registry import ACTIONS, process
from steward.canvas.coords import CoordinateSpace


def base_shapes() -> dict[str, dict[str, Any]]:
    return {
        "box": {
            "id": "box",
            "type": "geo",
            "x": 0.0,
            "y": 0.0,
            "rotation": 0.0,
            "props": {"geo": "rectangle", "w": 100.0, "h": 50.0, "color": "black"},
        },
        "box2": {
            "id": "box2",
            "type": "geo",
            "x": 300.0,
            "y": 200.0,
            "rotation": 0.0,
            "props": {"geo": "rectangle", "w": 100.0, "h": 50.0, "color": "black"},
        },
    }


def run(action: dict[str, Any], *, complete: bool = True, path: Any = None) -> Any:
    ctx = RunState(shapes=base_shapes())
    out = process(
        action, index=0, complete=complete, incomplete_path=path, ctx=ctx, enabled=ACTIONS
    )
    return out, ctx


def create(shape: dict[str, Any]) -> dict[str, Any]:
    return {"_type": "create", "intent": "t", "shape": shape}


def unit_shape(kind: str, shape_id: str, **fields: Any) -> dict[str, Any]:
    """A 1x1 `kind` at the origin, with `fields` on top."""
    return {"_type": kind, "shapeId": shape_id, "x": 0, "y": 0, "w": 1, "h": 1, **fields}


CASES: list[tuple[str, dict[str, Any], Any]] = [
    (
        "numbers as strings",
        create({"_type": "rectangle", "shapeId": "r", "x": "10", "y": "20px", "w": "30", "h": 40}),
        lambda p: (p["x"], p["y"], p["props"]["w"]) == (10, 20, 30),
    ),
    (
        "NaN size falls back to default",
        create({"_type": "rectangle", "shapeId": "r", "x": 0, "y": 0, "w": math.nan, "h": 5}),
        lambda p: p["props"]["w"] == 100,
    ),
    (
        "Infinity coordinate is clamped",
        create({"_type": "rectangle", "shapeId": "r", "x": math.inf, "y": -1e300, "w": 1, "h": 1}),
        lambda p: (p["x"], p["y"]) == (1e6, -1e6),
    ),
    (
        "colour alias",
        create(unit_shape("ellipse", "e", color="Purple")),
        lambda p: p["props"]["color"] == "violet",
    ),
    (
        "gray spelled the US way",
        create(unit_shape("rectangle", "g", color="gray")),
        lambda p: p["props"]["color"] == "grey",
    ),
    (
        "unknown colour becomes default",
        create(unit_shape("rectangle", "g", color="chartreuse")),
        lambda p: p["props"]["color"] == "black",
    ),
    (
        "shape type alias and case",
        create(unit_shape("Circle", "c")),
        lambda p: p["props"]["geo"] == "ellipse",
    ),
    (
        "fill enum normalised",
        create(unit_shape("rectangle", "f", fill="SOLID")),
        lambda p: p["props"]["fill"] == "lined-fill",  # the model's solid is saturated
    ),
    (
        "duplicate id renamed",
        create(unit_shape("rectangle", "box")),
        lambda p: p["id"] == "box-1",
    ),
    (
        "numbered duplicate id bumped",
        create(unit_shape("rectangle", "box2")),
        lambda p: p["id"] == "box3",
    ),
    (
        "shape: prefix stripped",
        create(unit_shape("rectangle", "shape:new")),
        lambda p: p["id"] == "new",
    ),
    (
        "arrow to a missing shape is unbound",
        create(
            {
                "_type": "arrow",
                "shapeId": "a",
                "x1": 0,
                "y1": 0,
                "x2": 5,
                "y2": 5,
                "fromId": "box",
                "toId": "ghost",
            }
        ),
        lambda p: p["bindings"] == {"start": "box", "end": None},
    ),
    (
        "text alignment alias",
        create(
            {
                "_type": "text",
                "shapeId": "t",
                "x": 100,
                "y": 0,
                "text": "hello",
                "textAlign": "right",
            }
        ),
        lambda p: p["props"]["textAlign"] == "end" and p["x"] < 100,
    ),
]


@pytest.mark.parametrize(("what", "action", "check"), CASES, ids=[c[0] for c in CASES])
def test_create_repairs(what: str, action: dict[str, Any], check: Any) -> None:
    out, _ = run(action)
    assert out is not None and len(out.ops) == 1
    params = out.ops[0].params
    assert check(params), params


REJECTS: list[tuple[str, dict[str, Any]]] = [
    (
        "update of a missing shape",
        {"_type": "update", "intent": "", "update": {"shapeId": "nope", "color": "red"}},
    ),
    ("delete of a missing shape", {"_type": "delete", "intent": "", "shapeId": "nope"}),
    ("move of a missing shape", {"_type": "move", "intent": "", "shapeId": "x", "x": 1, "y": 1}),
    (
        "align with no real ids",
        {"_type": "align", "intent": "", "shapeIds": ["a", "b"], "alignment": "left"},
    ),
    ("create of an unknown kind", create({"_type": "unknown", "shapeId": "u", "x": 0, "y": 0})),
    ("create without a shape", {"_type": "create", "intent": ""}),
    ("action not in this mode", {"_type": "getInspiration"}),
    (
        "move with non-numeric target",
        {"_type": "move", "intent": "", "shapeId": "box", "x": "left", "y": 0},
    ),
]


@pytest.mark.parametrize(("what", "action"), REJECTS, ids=[c[0] for c in REJECTS])
def test_rejected_with_a_note_or_nothing(what: str, action: dict[str, Any]) -> None:
    out, _ctx = run(action)
    assert out is None or out.ops == []


def test_partial_enum_is_held_back() -> None:
    action = create(unit_shape("rectangle", "r", color="light-"))
    out, _ = run(action, complete=False, path=("shape", "color"))
    assert out is not None and out.ops[0].params["props"]["color"] == "black"
    out, _ = run(create({"_type": "rect"}), complete=False, path=("shape", "_type"))
    assert out is None


def test_partial_id_waits() -> None:
    out, _ = run(
        create({"_type": "rectangle", "shapeId": "sig", "x": 0, "y": 0}),
        complete=False,
        path=("shape", "shapeId"),
    )
    assert out is None


def test_rename_map_lets_the_model_keep_its_id() -> None:
    ctx = RunState(shapes=base_shapes())
    process(
        create(unit_shape("rectangle", "box")),
        index=0,
        complete=True,
        incomplete_path=None,
        ctx=ctx,
        enabled=ACTIONS,
    )
    ctx.shapes["box-1"] = {"id": "box-1", "type": "geo", "x": 0, "y": 0, "props": {}}
    out = process(
        {"_type": "label", "intent": "", "shapeId": "box", "text": "x"},
        index=1,
        complete=True,
        incomplete_path=None,
        ctx=ctx,
        enabled=ACTIONS,
    )
    assert out is not None and out.ops[0].params["id"] == "box-1"


def test_model_coordinates_are_offset_back_to_page() -> None:
    ctx = RunState(shapes=base_shapes(), coords=CoordinateSpace(1000, 500))
    action = create({"_type": "rectangle", "shapeId": "r", "x": 10, "y": 20, "w": 5, "h": 5})
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None and (out.ops[0].params["x"], out.ops[0].params["y"]) == (1010, 520)


def test_layout_actions_become_update_shape() -> None:
    out, _ = run({"_type": "align", "intent": "", "shapeIds": ["box", "box2"], "alignment": "TOP"})
    assert out is not None and [op.name for op in out.ops] == ["update_shape"]
    assert out.ops[0].params == {"id": "box2", "y": 0.0}
    out, _ = run(
        {
            "_type": "place",
            "intent": "",
            "shapeId": "box2",
            "referenceShapeId": "box",
            "side": "below",
            "align": "left",
            "sideOffset": 10,
        }
    )
    assert out is not None and out.ops[0].params == {"id": "box2", "x": 0.0, "y": 60.0}


def test_todo_status_alias_and_missing_id() -> None:
    out, ctx = run({"_type": "update-todo-list", "status": "Completed", "text": "a"})
    assert out is not None and ctx.todo[0].status == "done" and ctx.todo[0].id == 1


def _with(shape: dict[str, Any]) -> RunState:
    return RunState(shapes={**base_shapes(), shape["id"]: shape})


LINE = {
    "id": "ln",
    "type": "line",
    "x": 0.0,
    "y": 0.0,
    "rotation": 0.0,
    "props": {"points": [{"x": 0, "y": 0}, {"x": 90, "y": 0}]},
}
DRAW = {**LINE, "id": "dr", "type": "draw", "props": {"segments": []}}
FRAME = {**LINE, "id": "fr", "type": "frame", "props": {"w": 200, "h": 200, "name": "F"}}


@pytest.mark.parametrize("shape", [LINE, DRAW, FRAME], ids=lambda s: str(s["type"]))
def test_a_label_on_a_shape_that_shows_no_text_is_refused_with_a_note(
    shape: dict[str, Any],
) -> None:
    ctx = _with(shape)
    action = {"_type": "label", "intent": "t", "shapeId": shape["id"], "text": "Road"}
    for complete in (False, True):
        out = process(
            action, index=0, complete=complete, incomplete_path=None, ctx=ctx, enabled=ACTIONS
        )
        assert out is None
    (note,) = ctx.notes  # said once, when complete
    assert f"label of {shape['id']!r} refused" in note and "cannot show text" in note
    assert "Road" not in note


@pytest.mark.parametrize("kind", ["geo", "note", "text", "arrow"])
def test_a_label_on_a_shape_with_text_is_applied(kind: str) -> None:
    props: dict[str, Any] = {"text": ""}
    if kind == "geo":
        props.update(geo="rectangle", w=100, h=50)
    shape = {"id": "s", "type": kind, "x": 0.0, "y": 0.0, "rotation": 0.0, "props": props}
    ctx = _with(shape)
    action = {"_type": "label", "intent": "t", "shapeId": "s", "text": "Road"}
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None and ctx.notes == []
    assert out.ops[0].params == {"id": "s", "props": {"text": "Road"}}


@pytest.mark.parametrize(
    ("sx", "sy", "want"),
    [
        (-1, 1, {"x": -100.0}),
        (1, "-0.5", {"y": -25.0, "props": {"h": 25.0}}),
        (-2.0, -3, {"x": -200.0, "y": -150.0, "props": {"w": 200.0, "h": 150.0}}),
    ],
)
def test_a_negative_scale_flips_instead_of_growing(sx: Any, sy: Any, want: Any) -> None:
    # The 100 x 50 box at 0, 0 mirrored across x = 0 and/or y = 0 (not scaled up in place).
    action = {
        "_type": "resize",
        "intent": "t",
        "shapeIds": ["box"],
        "scaleX": sx,
        "scaleY": sy,
        "originX": 0,
        "originY": 0,
    }
    out, _ = run(action)
    (op,) = out.ops
    assert op.name == "update_shape" and op.params == {"id": "box", **want}


@pytest.mark.parametrize(("sx", "sy"), [(0, 1), (1, "flat"), (None, 2)])
def test_a_scale_of_zero_or_no_number_is_refused(sx: Any, sy: Any) -> None:
    action = {"_type": "resize", "intent": "t", "shapeIds": ["box"], "scaleX": sx, "scaleY": sy}
    out, _ = run(action)
    assert out is None


def test_a_huge_scale_is_clamped_keeping_its_sign() -> None:
    action = {"_type": "resize", "intent": "t", "shapeIds": ["box"], "scaleX": -1e9, "scaleY": 1e9}
    out, _ = run(action)
    assert out.ops[0].params["props"] == {"w": 10_000.0, "h": 5000.0}
