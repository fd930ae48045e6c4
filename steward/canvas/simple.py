"""SimpleShape: the model-facing, full-detail description of one shape (every kind).

Records (see `steward.canvas.apply`) are converted to SimpleShape dicts for the prompt; the
pydantic models double as the shape part of the response JSON schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from steward.canvas.bounds import font_size, num, shape_bounds
from steward.canvas.styles import GEO_KINDS, GEO_TO_MODEL, Color, fill_to_model

GeoType = Literal[
    "rectangle",
    "ellipse",
    "triangle",
    "diamond",
    "hexagon",
    "pill",
    "cloud",
    "x-box",
    "check-box",
    "heart",
    "pentagon",
    "octagon",
    "star",
    "parallelogram-right",
    "parallelogram-left",
    "trapezoid",
    "fat-arrow-right",
    "fat-arrow-left",
    "fat-arrow-up",
    "fat-arrow-down",
]
Fill = Literal["none", "tint", "background", "solid", "pattern"]
TextAlign = Literal["start", "middle", "end"]


class _Simple(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    shapeId: str = Field(description="Unique id, e.g. 'signup-box'")
    note: str = Field(default="", description="What the shape is for (invisible to the user)")


class SimpleGeoShape(_Simple):
    """A geometric shape (rectangle, ellipse, star, …) as the model reads and writes it."""

    type_: GeoType = Field(alias="_type")
    x: float
    y: float
    w: float
    h: float
    color: Color = "black"
    fill: Fill = "none"
    text: str | None = None
    textAlign: TextAlign | None = None


class SimpleTextShape(_Simple):
    """A text shape as the model reads and writes it: where it starts, its words, its wrap."""

    type_: Literal["text"] = Field(alias="_type")
    x: float
    y: float
    text: str
    color: Color = "black"
    fontSize: float | None = None
    textAlign: TextAlign | None = None
    width: float | None = None
    wrap: bool | None = None


class SimpleNoteShape(_Simple):
    """A sticky note as the model reads and writes it."""

    type_: Literal["note"] = Field(alias="_type")
    x: float
    y: float
    text: str | None = None
    color: Color = "yellow"


class SimpleArrowShape(_Simple):
    """An arrow as the model reads and writes it: its two ends, the shapes they bind to and its
    bend."""

    type_: Literal["arrow"] = Field(alias="_type")
    x1: float
    y1: float
    x2: float
    y2: float
    fromId: str | None = None
    toId: str | None = None
    bend: float | None = None
    color: Color = "black"
    text: str | None = None


class SimpleLineShape(_Simple):
    """A straight line as the model reads and writes it: its two ends."""

    type_: Literal["line"] = Field(alias="_type")
    x1: float
    y1: float
    x2: float
    y2: float
    color: Color = "black"


class SimpleDrawShape(_Simple):
    """A freehand stroke (tldraw's `draw` record), named as the model draws it: `pen`."""

    type_: Literal["pen"] = Field(alias="_type")
    x: float
    y: float
    w: float
    h: float
    color: Color = "black"
    fill: Fill = "none"


class SimpleUnknownShape(_Simple):
    """A shape of a kind the model has no description for: its tldraw type and where it is."""

    type_: Literal["unknown"] = Field(alias="_type")
    subType: str
    x: float
    y: float


SIMPLE_SHAPE_MODELS: tuple[type[_Simple], ...] = (
    SimpleGeoShape,
    SimpleTextShape,
    SimpleNoteShape,
    SimpleArrowShape,
    SimpleLineShape,
    SimpleDrawShape,
    SimpleUnknownShape,
)


def model_type(record: dict[str, Any]) -> str:
    """The model's `_type` for a record."""
    kind = record.get("type")
    if kind == "geo":
        return GEO_TO_MODEL.get(str((record.get("props") or {}).get("geo")), "rectangle")
    if kind in ("text", "note", "arrow", "line"):
        return str(kind)
    return "pen" if kind == "draw" else "unknown"


def _text(props: dict[str, Any]) -> str | None:
    t = props.get("text")
    return t if isinstance(t, str) and t else None


def to_simple(record: dict[str, Any], shapes: dict[str, Any] | None = None) -> dict[str, Any]:
    """A record as the model sees it in full detail (page coordinates, not yet offset)."""
    props: dict[str, Any] = record.get("props") or {}
    kind = model_type(record)
    x, y = num(record.get("x")), num(record.get("y"))
    out: dict[str, Any] = {"_type": kind, "shapeId": record["id"]}
    note = (record.get("meta") or {}).get("note") if isinstance(record.get("meta"), dict) else None
    if kind in GEO_KINDS:
        out |= {
            "x": x,
            "y": y,
            "w": num(props.get("w"), 1.0),
            "h": num(props.get("h"), 1.0) + num(props.get("growY")),
            "color": props.get("color", "black"),
            "fill": fill_to_model(props.get("fill")),
        }
        if _text(props):
            out["text"] = _text(props)
            if props.get("align") in ("start", "end"):
                out["textAlign"] = props["align"]
    elif kind == "text":
        b = shape_bounds(record)
        align = props.get("textAlign", "start")
        # The model's text x is the anchor of its alignment (left, centre or right edge).
        ax = b.x if align == "start" else (b.mid_x if align == "middle" else b.max_x)
        out |= {
            "x": ax,
            "y": y,
            "text": props.get("text", ""),
            "color": props.get("color", "black"),
        }
        out["fontSize"] = font_size(props)
        if align != "start":
            out["textAlign"] = align
        if props.get("autoSize") is False and "w" in props:
            out["width"] = num(props.get("w"))
            out["wrap"] = True
    elif kind == "note":
        out |= {"x": x, "y": y, "color": props.get("color", "yellow")}
        if _text(props):
            out["text"] = _text(props)
    elif kind in ("arrow", "line"):
        if kind == "arrow":
            start, end = props.get("start") or {}, props.get("end") or {}
        else:
            pts = props.get("points") or [{}, {}]
            start, end = pts[0], pts[-1]
        out |= {
            "x1": x + num(start.get("x")),
            "y1": y + num(start.get("y")),
            "x2": x + num(end.get("x")),
            "y2": y + num(end.get("y")),
            "color": props.get("color", "black"),
        }
        if kind == "arrow":
            binds = record.get("bindings") or {}
            out["fromId"] = binds.get("start")
            out["toId"] = binds.get("end")
            if num(props.get("bend")):
                out["bend"] = num(props.get("bend"))
            if _text(props):
                out["text"] = _text(props)
    elif kind == "pen":
        b = shape_bounds(record)
        out |= {
            "x": b.x,
            "y": b.y,
            "w": b.w,
            "h": b.h,
            "color": props.get("color", "black"),
            "fill": fill_to_model(props.get("fill")),
        }
    else:
        b = shape_bounds(record, shapes)
        out |= {"subType": str(record.get("type")), "x": b.x, "y": b.y}
    if note:
        out["note"] = note
    return out
