"""`create`: make a new shape (geometric, text, note, arrow or line)."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel, ActionSpec, RunState, WireOp
from steward.actions.convert import norm_kind, simple_to_record
from steward.actions.shapes.page_fields import to_page
from steward.canvas.simple import (
    SimpleArrowShape,
    SimpleGeoShape,
    SimpleLineShape,
    SimpleNoteShape,
    SimpleTextShape,
)
from steward.canvas.styles import COLOR_LOOKS, FILL_LOOKS

CreatableShape = (
    SimpleGeoShape | SimpleTextShape | SimpleNoteShape | SimpleArrowShape | SimpleLineShape
)


class Create(ActionModel):
    """What the model writes for `create`: why, and the full description of the new shape."""

    intent: str
    shape: CreatableShape


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
    page, written = to_page(kind, {**shape, "_type": kind}, ctx, note)
    if kind == "arrow":
        for key in ("fromId", "toId"):
            if page.get(key) is not None:
                ref = ctx.existing_id(page[key], besides=sid)
                if ref is None and complete:
                    ctx.notes.append(f"arrow {sid!r}: {key} {page[key]!r} does not exist")
                page[key] = written[key] = ref
    if complete and kind in ("arrow", "line") and ("x1" not in page or "y1" not in page):
        return None
    if kind not in ("arrow", "line") and ("x" not in page or "y" not in page):
        return None
    # `shape`: what is applied, in the model's frame (the history's echo); `_shape`: on the page.
    return {**data, "shape": {**written, "shapeId": sid}, "_shape": page, "_id": sid}


def _resolve_create(data: dict[str, Any], ctx: RunState) -> list[WireOp]:
    rec = simple_to_record(data["_shape"], data["_id"])
    return [WireOp("create_shape", rec)] if rec else []


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_CREATE = """Make a new shape. Kinds: the geometric ones (rectangle, ellipse, diamond, star, cloud,
…: the schema lists them), `text`, `note`, `arrow` and `line`. For any other form draw with `pen`.
Never create a shape the lists call "unknown" (a kind you cannot make; you may still move it).
- Give each shape a unique `shapeId` and a `note` saying what it is for: you will read the notes
  later; the user never sees them.
- Geometric shapes take x, y (top-left corner), w and h; notes and text take x, y.
- Containment: a shape meant to sit inside another must fit inside it, with a margin. If it does
  not, make the inner shapes smaller or the outer one bigger.

Labels and text
- Label only when asked, or when the format calls for it: a diagram of a cat may name its parts; a
  drawing of a cat should not.
- A label (the `text` of a geometric shape, note or arrow) is about 30 px tall per line and about
  13 px per character, with 16 px of room all round: one line needs a shape about 62 px tall,
  each more line about 30 px more. A shape too small for its label is drawn taller to hold it
  (the shape lists show the size you gave), so make shapes wide enough for their text: labelled
  boxes in flow charts and diagrams should be at least 200 px wide and tall enough for their text
  (100 px holds two lines) unless there is a reason not to. `textAlign` sets where the label sits
  inside its shape.
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
"""
# The label colour is always black (records set `labelColor` so): a red box's label is black.
COLOR_RULE = (
    "- A shape's `color` is its outline and fill colour (a note's paper, a text shape's "
    "letters); the labels inside geometric shapes, notes and arrows are always black (hard "
    "to read on a dark `solid` fill). Its `fill` says how its inside is painted."
)
STYLE_GUIDE = "\n".join(
    [
        COLOR_RULE,
        *(f"- Fill `{name}`: {looks}." for name, looks in FILL_LOOKS.items()),
        "- For a white shape use fill `background` with colour `grey`, so its outline stays "
        "visible. A red barn is colour `red` with fill `solid`; fill `tint` would make it pink.",
        *(f"- Colour `{name}`: {looks}." for name, looks in COLOR_LOOKS.items()),
    ]
)

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
