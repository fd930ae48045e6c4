"""`pen`: draw a free line through points."""

from __future__ import annotations

from typing import Any, Literal

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.sanitize import MAX_COORD, norm_color, norm_enum, to_bool, to_number
from steward.canvas.draw import draw_segments, smooth_through
from steward.canvas.styles import COLORS, Color, fill_to_tldraw, model_fill


class PenPoint(ActionModel):
    """One point a `pen` line passes through, in model coordinates."""

    x: float
    y: float


class Pen(ActionModel):
    """What the model writes for `pen`: the points of a free line, how they are joined, and its
    colour and fill."""

    intent: str
    shapeId: str | None = None
    points: list[PenPoint]
    style: Literal["smooth", "straight"] = "smooth"
    closed: bool = False
    color: Color = "black"
    fill: Literal["none", "tint", "background", "solid", "pattern"] = "none"


def _sanitize_pen(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    raw = data.get("points")
    if not isinstance(raw, list):
        return None
    pts: list[tuple[float, float]] = []
    written: list[tuple[float, float]] = []  # in the model's coordinates
    for p in raw[:2000]:
        if isinstance(p, dict):
            x, y = to_number(p.get("x"), limit=MAX_COORD), to_number(p.get("y"), limit=MAX_COORD)
            if x is not None and y is not None:
                written.append((x, y))
                pts.append((ctx.coords.x_from_model(x), ctx.coords.y_from_model(y)))
    if len(pts) < 2:
        return None
    sid = ctx.unique_id(data.get("shapeId") or f"pen-{index + 1}", index)
    if sid is None:
        return None
    color = norm_color(data.get("color"))
    if complete and data.get("color") is not None and color != data.get("color"):
        # Only the palette draws; say what was drawn instead of a colour it does not have.
        said = str(data.get("color"))[:40]
        instead = color or "black"
        why = "" if color else f" (the palette: {', '.join(COLORS)})"
        ctx.notes.append(f"pen {sid!r}: colour {said!r} is drawn as {instead!r}{why}")
    return {
        "_type": "pen",
        "_id": sid,
        "_points": pts,
        # What the history shows of it (the points themselves would crowd it out): the id a
        # later request edits it by, and where its points run.
        "shapeId": sid,
        "points": _points_summary(written),
        "style": norm_enum(data.get("style"), ("smooth", "straight")) or "smooth",
        "closed": bool(to_bool(data.get("closed"))),
        "color": color or "black",
        # The fill as the model names it (the history echoes it); `_fill` is tldraw's.
        "fill": model_fill(data.get("fill")) or "none",
        "_fill": fill_to_tldraw(data.get("fill")),
    }


def _points_summary(pts: list[tuple[float, float]]) -> dict[str, Any]:
    """What the history echoes of a pen's points (all of them would crowd it out): how many,
    the first and the last, and the box they lie in, in the model's frame."""
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    (x0, y0), (x1, y1) = pts[0], pts[-1]

    def n(v: float) -> float | int:
        return int(v) if float(v).is_integer() else v

    box = {"x": n(min(xs)), "y": n(min(ys)), "w": n(max(xs) - min(xs)), "h": n(max(ys) - min(ys))}
    first, last = {"x": n(x0), "y": n(y0)}, {"x": n(x1), "y": n(y1)}
    return {"count": len(pts), "first": first, "last": last, "within": box}


def _resolve_pen(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    straight = data["style"] == "straight"
    pts: list[tuple[float, float]] = list(data["_points"])
    if not straight:
        pts = smooth_through(pts, closed=data["closed"])
    elif data["closed"]:
        pts.append(pts[0])
    x0, y0 = min(p[0] for p in pts), min(p[1] for p in pts)
    rel = [{"x": x - x0, "y": y - y0, "z": 0.5} for x, y in pts]
    if not straight:
        # tldraw stores a stroke as half-float steps from point to point: on an eighth of a
        # pixel, each short step is exact, so browsers hold the very points the mirror holds.
        rel = [{"x": round(p["x"] * 8) / 8, "y": round(p["y"] * 8) / 8, "z": 0.5} for p in rel]
    props = {
        "segments": draw_segments(rel, straight=straight),
        "color": data["color"],
        "fill": data["_fill"],
        "dash": "draw",
        "size": "m",
        "isComplete": True,
        "isClosed": data["closed"],
        "isPen": True,
    }
    rec = {"id": data["_id"], "type": "draw", "x": x0, "y": y0, "rotation": 0.0, "props": props}
    return [WireOp("create_shape", rec)]


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_PEN = """Draw a free line through points (x, y): `smooth` for curves, `straight` for straight
segments; the line passes through every point you give. `closed` joins the end to the start,
and a closed line can be filled. Name it with `shapeId` to refer to it later. Use it for forms
the shape kinds cannot make, or where pieces must fit together exactly. Give enough points for a
smooth curve (a circle wants a dozen or more)."""

PEN = ActionSpec(
    "pen",
    family="shapes",
    kind="canvas",
    creates="shapeId",
    schema=Pen,
    description="Draw a freehand or polyline shape through points.",
    guide=_PEN,
    sanitize=_sanitize_pen,
    resolve=_resolve_pen,
    streams=True,
    atomic_fields=("style", "color", "fill"),
)
