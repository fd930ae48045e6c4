"""Making and changing shapes: create, update, delete, label, clear, pen."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.convert import norm_kind, record_diff, simple_to_record
from steward.actions.fields import FIELDS, clean_fields
from steward.actions.sanitize import (
    MAX_COORD,
    clean_id,
    norm_color,
    norm_enum,
    to_bool,
    to_number,
    to_text,
)
from steward.canvas.draw import draw_segments
from steward.canvas.simple import (
    SimpleArrowShape,
    SimpleGeoShape,
    SimpleLineShape,
    SimpleNoteShape,
    SimpleTextShape,
    model_type,
    to_simple,
)
from steward.canvas.styles import COLOR_LOOKS, COLORS, FILL_LOOKS, Color, fill_to_tldraw

CreatableShape = (
    SimpleGeoShape | SimpleTextShape | SimpleNoteShape | SimpleArrowShape | SimpleLineShape
)


class Create(ActionModel):
    intent: str
    shape: CreatableShape


# The fields an update may change (no docstring: it would become the schema's description).
# Each kind takes only its own (a rectangle has no `x1`, a text no `fill`); the sanitizer
# refuses any other key, and a position (x, y: that is `move`), with a note to the model.
class ShapeChange(ActionModel):
    shapeId: str
    type_: str | None = Field(default=None, alias="_type")
    text: str | None = None
    note: str | None = None
    color: Color | None = None
    fill: Literal["none", "tint", "background", "solid", "pattern"] | None = None
    w: float | None = None
    h: float | None = None
    fontSize: float | None = None
    width: float | None = None
    wrap: bool | None = None
    textAlign: Literal["start", "middle", "end"] | None = None
    x1: float | None = None
    y1: float | None = None
    x2: float | None = None
    y2: float | None = None
    bend: float | None = None
    fromId: str | None = None
    toId: str | None = None


class Update(ActionModel):
    intent: str
    update: ShapeChange = Field(
        description="shapeId plus only the fields to change, of those its kind has"
    )


class Delete(ActionModel):
    intent: str
    shapeId: str


class Label(ActionModel):
    intent: str
    shapeId: str
    text: str


class Clear(ActionModel):
    pass


class PenPoint(ActionModel):
    x: float
    y: float


class Pen(ActionModel):
    intent: str
    points: list[PenPoint]
    style: Literal["smooth", "straight"] = "smooth"
    closed: bool = False
    color: Color = "black"
    fill: Literal["none", "tint", "background", "solid", "pattern"] = "none"


def _to_page(kind: str, shape: dict[str, Any], ctx: RunState, note: str | None) -> dict[str, Any]:
    """The kind's clean fields with the model's offset and rounding undone; each dropped
    field becomes a note prefixed by `note` (None while the action is still streaming)."""
    fields, dropped = clean_fields(kind, shape)
    if note is not None:
        ctx.notes.extend(f"{note}: {why}" for why in dropped)
    return ctx.coords.shape_from_model(fields)


def _sanitize_create(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    shape = data.get("shape")
    if not isinstance(shape, dict):
        return None
    kind = norm_kind(shape.get("_type"))
    if kind is None or kind == "unknown":
        if complete:
            ctx.notes.append(f"dropped create of unsupported type {str(shape.get('_type'))[:40]!r}")
        return None
    raw_id = shape.get("shapeId")
    if raw_id is None:
        if not complete:
            return None  # wait for the id before anything shows
        raw_id = f"{kind}-{index + 1}"
    sid = ctx.unique_id(raw_id, index)
    if sid is None:
        return None
    note = f"create {sid!r}" if complete else None
    page = _to_page(kind, {**shape, "_type": kind}, ctx, note)
    if kind == "arrow":
        for key in ("fromId", "toId"):
            if page.get(key) is not None:
                ref = ctx.existing_id(page[key], besides=sid)
                if ref is None and complete:
                    ctx.notes.append(f"arrow {sid!r}: {key} {page[key]!r} does not exist")
                page[key] = ref
    if complete and kind in ("arrow", "line") and ("x1" not in page or "y1" not in page):
        return None
    if kind not in ("arrow", "line") and ("x" not in page or "y" not in page):
        return None
    return {**data, "shape": page, "_id": sid}


def _resolve_create(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    rec = simple_to_record(data["shape"], data["_id"])
    return [WireOp("create_shape", rec)] if rec else []


def _sanitize_update(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    if not complete:
        return None
    upd = data.get("update") if isinstance(data.get("update"), dict) else data.get("shape")
    if not isinstance(upd, dict):
        return None
    sid = ctx.existing_id(upd.get("shapeId"))
    if sid is None:
        ctx.notes.append(f"update of missing shape {upd.get('shapeId')!r}")
        return None
    upd = {**upd, "shapeId": sid}
    kind = model_type(ctx.shapes[sid])
    moved = [k for k in ("x", "y") if upd.pop(k, None) is not None]
    if moved:
        ctx.notes.append(
            f"update of {sid!r}: position ({', '.join(moved)}) left as it was; use move"
        )
    if "_type" in upd:
        asked = norm_kind(upd["_type"])
        if asked is None:
            ctx.notes.append(f"update of {sid!r}: _type {upd.pop('_type')!r} is not a kind")
        else:
            kind = upd["_type"] = asked
    for key in ("fromId", "toId"):
        if key in upd and upd[key] is not None:
            upd[key] = ctx.existing_id(upd[key])
    note = f"update of {sid!r} (that field was left as it was)"
    return {**data, "update": _to_page(kind, upd, ctx, note), "_id": sid}


def _resolve_update(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    sid = data["_id"]
    current = ctx.shapes[sid]
    simple = to_simple(current, ctx.shapes)
    base = simple_to_record(simple, sid)
    merged = {**simple, **{k: v for k, v in data["update"].items() if k != "shapeId"}}
    new = simple_to_record(merged, sid)
    if base is None or new is None or base["type"] != new["type"]:
        ctx.notes.append(f"update of {sid!r} cannot change its kind")
        return []
    params = record_diff(base, new)
    return [WireOp("update_shape", params)] if len(params) > 1 else []


def _sanitize_delete(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    if not complete:
        return None
    asked = data.get("shapeIds") or data.get("shapeId")
    ids = ctx.existing_ids(asked)
    if not ids:
        ctx.notes.append(f"delete of missing shape {str(asked)[:60]!r}")
        return None
    return {**data, "_ids": ids}


def _resolve_delete(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("delete_shape", {"ids": data["_ids"]})]


def _sanitize_label(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    sid = ctx.existing_id(data.get("shapeId"))
    text = to_text(data.get("text"))
    if sid is None or text is None:
        if complete:  # partial versions come back complete; say it once
            what = "missing shape" if sid is None else "shape, without text"
            ctx.notes.append(f"label of {what} {str(data.get('shapeId'))[:60]!r}")
        return None
    kind = model_type(ctx.shapes[sid])
    if "text" not in FIELDS.get(kind, frozenset()):
        # Browsers would drop the text of a shape that cannot show one; the mirror would not.
        if complete:
            ctx.notes.append(
                f"label of {sid!r} refused: a {kind} shape cannot show text; label a geometric "
                "shape, note or arrow, or create a text shape beside it"
            )
        return None
    return {**data, "_id": sid, "text": text}


def _resolve_label(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    return [WireOp("update_shape", {"id": data["_id"], "props": {"text": data["text"]}})]


def _sanitize_clear(
    data: dict[str, Any], ctx: RunState, index: int, complete: bool
) -> dict[str, Any] | None:
    return data if complete else None


def _resolve_clear(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    ids = [sid for sid, s in ctx.shapes.items() if not s.get("parentId")]
    return [WireOp("delete_shape", {"ids": ids})] if ids else []


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
        "fill": fill_to_tldraw(data.get("fill")),
    }


def _points_summary(pts: list[tuple[float, float]]) -> str:
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    (x0, y0), (x1, y1) = pts[0], pts[-1]
    return (
        f"{len(pts)} points from ({x0:g}, {y0:g}) to ({x1:g}, {y1:g}), "
        f"within x {min(xs):g} to {max(xs):g}, y {min(ys):g} to {max(ys):g}"
    )


def _resolve_pen(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    pts = data["_points"]
    x0, y0 = min(p[0] for p in pts), min(p[1] for p in pts)
    rel = [{"x": x - x0, "y": y - y0, "z": 0.5} for x, y in pts]
    if data["closed"]:
        rel.append(dict(rel[0]))
    props = {
        "segments": draw_segments(rel, straight=data["style"] == "straight"),
        "color": data["color"],
        "fill": data["fill"],
        "dash": "draw",
        "size": "m",
        "isComplete": True,
        "isClosed": data["closed"],
        "isPen": True,
    }
    rec = {"id": data["_id"], "type": "draw", "x": x0, "y": y0, "rotation": 0.0, "props": props}
    return [WireOp("create_shape", rec)]


_ = clean_id  # re-exported for action modules that extend this family

# System-prompt sections (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to them.
_CREATE = """Make a new shape. Kinds: the geometric ones (rectangle, ellipse, diamond, star, cloud,
…: the schema lists them), `text`, `note`, `arrow` and `line`. For any other form draw with `pen`.
Never create `unknown` shapes (you may still move them).
- Give each shape a unique `shapeId` and a `note` saying what it is for: you will read the notes
  later; the user never sees them.
- Geometric shapes take x, y (top-left corner), w and h; notes and text take x, y.
- Containment: a shape meant to sit inside another must fit inside it, with a margin. If it does
  not, make the inner shapes smaller or the outer one bigger.

Labels and text
- Label only when asked, or when the format calls for it: a diagram of a cat may name its parts; a
  drawing of a cat should not.
- A label (the `text` of a geometric shape, note or arrow) is about 24 px tall, about 14 px per
  character. A shape too small for its label grows taller to hold it, so make shapes wide enough
  for their text: labelled boxes in flow charts and diagrams should be at least 200 px wide and tall
  enough for their text (100 px holds a line or two) unless there is a reason not to. `textAlign`
  sets where the label sits inside its shape.
- Notes are 200 × 200 sticky notes, for a few words; use a geometric or text shape for more.
- Text shapes: `fontSize` is the height of the text (24 by default). A text shape grows as wide as
  its text. To wrap it at a width, give both `width` and `wrap: true` (either alone does nothing);
  leave both out for the default. The image shows how much room text takes.
- A text shape's `textAlign` (start, the default; middle; end) also sets what x means: its left
  edge, its centre, or its right edge. To put text just left of a shape, align it `end` with x a
  little less than the shape's x. Centred and right-aligned text are the only shapes whose x is not
  their left edge.

Arrows and lines
- Arrows and lines run from x1, y1 to x2, y2. Arrows are lines with a head; the fat-arrow kinds are
  2-D shapes, not connectors.
- Connect an arrow with `fromId` and `toId` (the shapes it leaves and reaches): it is then bound to
  them and follows them when they move.
- `bend` curves an arrow: how many pixels its middle moves off the straight line. Positive bows it
  to its right as seen from its start (an arrow pointing right bows downward), negative to its
  left. An arrow bowing the wrong way needs the opposite sign.
- Check that no arrow already links the same shapes for the same purpose before adding one.
- An arrow's label sits on its middle: make the arrow long enough to hold the label.

Colours and fills
- A shape's `color` is its outline, text and fill colour; its `fill` says how its inside is painted.
"""
STYLE_GUIDE = "\n".join(
    [
        *(f"- Fill `{name}`: {looks}." for name, looks in FILL_LOOKS.items()),
        "- For a white shape use fill `background` with colour `grey`, so its outline stays "
        "visible. A red barn is colour `red` with fill `solid`; fill `tint` would make it pink.",
        *(f"- Colour `{name}`: {looks}." for name, looks in COLOR_LOOKS.items()),
    ]
)

_UPDATE = """Change fields of a shape that exists: its `shapeId` and only the fields that change,
one update per shape. The rules of `create` apply to the new values. Never change a position with
it (that is `move`), and a shape cannot change kind: delete it and create the new one instead."""

_DELETE = """Remove a shape by its id, and only what the request calls for. Arrows bound to a
deleted shape stay, loose at that end: delete or reconnect them too."""

_LABEL = """Set or replace the text of one shape: the label of a geometric shape, note or arrow, or
the text of a text shape. The label rules of `create` apply: label only when the request calls for
it, and make sure the text fits its shape."""

_CLEAR = """Delete every shape on the canvas. Only when the user asks for a clean slate."""

_PEN = """Draw a free line through points (x, y): `smooth` for curves, `straight` for straight
segments; `closed` joins the end to the start, and a closed line can be filled. Use it for forms
the shape kinds cannot make, or where pieces must fit together exactly. Give enough points for a
smooth curve (a circle wants a dozen or more)."""

CREATE = ActionSpec(
    "create",
    family="shapes",
    kind="canvas",
    creates="shape.shapeId",
    schema=Create,
    description="Create a shape.",
    guide=_CREATE + STYLE_GUIDE,
    sanitize=_sanitize_create,
    resolve=_resolve_create,
    streams=True,
    atomic_fields=(
        "shape._type",
        "shape.shapeId",
        "shape.color",
        "shape.fill",
        "shape.textAlign",
        "shape.fromId",
        "shape.toId",
    ),
)

UPDATE = ActionSpec(
    "update",
    family="shapes",
    kind="canvas",
    schema=Update,
    description="Change properties of a shape (not its position).",
    guide=_UPDATE,
    sanitize=_sanitize_update,
    resolve=_resolve_update,
)

DELETE = ActionSpec(
    "delete",
    family="shapes",
    kind="canvas",
    schema=Delete,
    description="Delete a shape.",
    guide=_DELETE,
    sanitize=_sanitize_delete,
    resolve=_resolve_delete,
)

LABEL = ActionSpec(
    "label",
    family="shapes",
    kind="canvas",
    schema=Label,
    description="Set the text of a shape.",
    guide=_LABEL,
    sanitize=_sanitize_label,
    resolve=_resolve_label,
    streams=True,
    atomic_fields=("shapeId",),
)

CLEAR = ActionSpec(
    "clear",
    family="shapes",
    kind="canvas",
    schema=Clear,
    description="Delete every shape on the canvas.",
    guide=_CLEAR,
    sanitize=_sanitize_clear,
    resolve=_resolve_clear,
)

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
