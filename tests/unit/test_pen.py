"""Pens become tldraw draw shapes that draw every point: tldraw draws a `straight` segment from
its first point to its second only, so a straight polyline is one straight segment per edge."""

from __future__ import annotations

import json
import math
from itertools import pairwise
from typing import Any

from steward.actions.base import RunState
from steward.actions.convert import simple_to_record
from steward.actions.registry import ACTIONS, process
from steward.canvas.apply import apply_wire_action
from steward.canvas.bounds import shape_bounds
from steward.canvas.simple import to_simple
from steward.canvas.tiers import to_blurry
from steward.prompt.response_schema import response_schema
from steward.protocol.box import Box
from steward.protocol.messages import WireAction

FENCE = [{"x": 45, "y": 305}, {"x": 405, "y": 305}, {"x": 405, "y": 685}, {"x": 45, "y": 685}]


def _pen(**fields: Any) -> dict[str, Any]:
    ctx = RunState(shapes={})
    action = {"_type": "pen", "shapeId": "rail", "points": FENCE, **fields}
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None
    (op,) = out.ops
    assert op.name == "create_shape"
    rec: dict[str, Any] = op.params
    return rec


def _edges(rec: dict[str, Any]) -> list[list[tuple[float, float]]]:
    return [
        [(rec["x"] + p["x"], rec["y"] + p["y"]) for p in seg["points"]]
        for seg in rec["props"]["segments"]
    ]


def _mirrored(rec: dict[str, Any]) -> dict[str, Any]:
    shapes: dict[str, dict[str, Any]] = {}
    apply_wire_action(shapes, WireAction(id="c", name="create_shape", params=rec))
    return shapes[rec["id"]]


def test_a_straight_pen_is_one_straight_segment_per_edge() -> None:
    rec = _pen(style="straight")
    segs = rec["props"]["segments"]
    assert [s["type"] for s in segs] == ["straight"] * 3
    pts = [(p["x"], p["y"]) for p in FENCE]
    assert _edges(rec) == [[pts[0], pts[1]], [pts[1], pts[2]], [pts[2], pts[3]]]
    assert shape_bounds(_mirrored(rec)) == Box(45, 305, 360, 380)


def test_a_closed_straight_pen_returns_to_its_start() -> None:
    rec = _pen(style="straight", closed=True)
    edges = _edges(rec)
    assert len(edges) == 4 and edges[-1] == [(45, 685), (45, 305)]
    assert rec["props"]["isClosed"] is True


def test_a_smooth_pen_keeps_every_point_in_one_free_segment() -> None:
    wave = [{"x": i, "y": (i * 7) % 50} for i in range(300)]
    ctx = RunState(shapes={})
    action = {"_type": "pen", "shapeId": "w", "points": wave}
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None
    segs = out.ops[0].params["props"]["segments"]
    assert [s["type"] for s in segs] == ["free"]
    held = [(p["x"], p["y"]) for p in segs[0]["points"]]
    assert _in_order([(float(p["x"]), float(p["y"])) for p in wave], held)


def _in_order(wanted: list[tuple[float, float]], held: list[tuple[float, float]]) -> bool:
    """Whether every wanted point is among `held`, in the same order (within the eighth of a
    pixel a smooth stroke's points are held on)."""
    at = 0
    for wx, wy in wanted:
        while at < len(held) and math.dist(held[at], (wx, wy)) > 0.09:
            at += 1
        if at == len(held):
            return False
    return True


def test_a_closed_smooth_pen_passes_through_every_point_and_ends_where_it_began() -> None:
    ring = [
        {"x": 500 + 120 * math.cos(k * math.pi / 6), "y": 300 + 80 * math.sin(k * math.pi / 6)}
        for k in range(12)
    ]
    rec = _pen(points=ring, closed=True, style="smooth")
    (seg,) = rec["props"]["segments"]
    page = [(rec["x"] + p["x"], rec["y"] + p["y"]) for p in seg["points"]]
    assert page[0] == page[-1] and rec["props"]["isClosed"] is True
    assert _in_order([(p["x"], p["y"]) for p in ring], page)
    # Dense enough that tldraw's trailing renderer stays on the curve.
    assert max(math.dist(a, b) for a, b in pairwise(page)) <= 6
    # The mirror holds the same curve: applied, its bounds take in every given point.
    shapes: dict[str, Any] = {}
    apply_wire_action(shapes, WireAction(id="a", name="create_shape", params=rec))
    box = shape_bounds(shapes["rail"]).expand(0.07)
    assert all(box.contains(Box(p["x"], p["y"], 0, 0)) for p in ring)


def test_a_pen_echoes_the_fill_the_model_named_and_takes_a_shape_id() -> None:
    ctx = RunState(shapes={})
    action = {"_type": "pen", "shapeId": "hill", "points": FENCE, "fill": "tint", "closed": True}
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None
    assert out.data["fill"] == "tint" and out.data["shapeId"] == "hill"
    assert out.ops[0].params["props"]["fill"] == "solid"  # tldraw's name for the pale tint
    pen_schema = json.dumps(response_schema(["pen"]))
    assert '"shapeId"' in pen_schema


def test_a_created_draw_box_draws_all_four_sides() -> None:
    rec = simple_to_record({"_type": "draw", "x": 10, "y": 20, "w": 30, "h": 40}, "d")
    assert rec is not None
    corners = [(10, 20), (40, 20), (40, 60), (10, 60), (10, 20)]
    assert _edges(rec) == [[a, b] for a, b in pairwise(corners)]


def test_the_mirror_splits_a_straight_polyline_from_any_producer() -> None:
    # A record with one straight segment of many points (as older stewards sent) is held as the
    # edges tldraw draws; client-bridge/src/canvas/record.ts splits it the same way.
    one = {"type": "straight", "points": [{"x": 0, "y": 0}, {"x": 10, "y": 0}, {"x": 10, "y": 5}]}
    rec = {"id": "d", "type": "draw", "x": 0, "y": 0, "props": {"segments": [one]}}
    shapes: dict[str, dict[str, Any]] = {}
    apply_wire_action(shapes, WireAction(id="c", name="create_shape", params=rec))
    edges = [[(0, 0), (10, 0)], [(10, 0), (10, 5)]]
    assert _edges(shapes["d"]) == edges
    free = {"type": "free", "points": one["points"]}
    upd = {"id": "d", "props": {"segments": [free, one]}}
    apply_wire_action(shapes, WireAction(id="u", name="update_shape", params=upd))
    assert [s["type"] for s in shapes["d"]["props"]["segments"]] == ["free", "straight", "straight"]
    assert _edges(shapes["d"])[1:] == edges


def _pen_notes(color: Any) -> tuple[str, list[str]]:
    ctx = RunState(shapes={})
    action = {"_type": "pen", "shapeId": "rail", "points": FENCE, "color": color}
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None
    return str(out.ops[0].params["props"]["color"]), ctx.notes


def test_a_pen_colour_outside_the_palette_is_mapped_or_refused_with_a_note() -> None:
    assert _pen_notes("red") == ("red", [])  # a palette colour: drawn as written, no note
    color, notes = _pen_notes("brown")  # an alias the palette maps
    assert color == "orange"
    assert notes == ["pen 'rail': colour 'brown' is drawn as 'orange'"]
    color, notes = _pen_notes("#8B4513")  # free text: black, and the palette is named
    assert color == "black"
    assert len(notes) == 1 and "'#8B4513' is drawn as 'black' (the palette: black, grey" in notes[0]


def test_the_pen_schema_offers_only_palette_colours() -> None:
    schema = response_schema(["pen"])
    pen = schema["properties"]["actions"]["items"]["anyOf"][0]
    assert pen["properties"]["color"] == {"$ref": "#/$defs/Color"}
    assert "red" in schema["$defs"]["Color"]["enum"]


def test_a_pen_stroke_reads_back_as_a_pen_and_updates_as_one() -> None:
    """Shape lists named a model's pen strokes "draw" (tldraw's record type), a word no
    prompt uses: they read `pen`, and an update naming that kind keeps its fields."""
    rec = _pen(color="blue")
    assert rec["type"] == "draw"  # what tldraw stores
    shapes = {"rail": {**rec, "id": "rail"}}
    assert to_blurry(shapes["rail"], shapes)["type"] == "pen"
    assert to_simple(shapes["rail"], shapes)["_type"] == "pen"
    ctx = RunState(shapes=shapes)
    update = {"_type": "update", "update": {"_type": "pen", "shapeId": "rail", "color": "red"}}
    out = process(update, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    assert out is not None and out.ops, ctx.notes
    assert out.ops[0].params["props"]["color"] == "red"
    assert not any("_type" in n for n in ctx.notes), ctx.notes
