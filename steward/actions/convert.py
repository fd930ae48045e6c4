"""Model-facing shapes (page coordinates) → shape records with complete tldraw props."""

from __future__ import annotations

from typing import Any

from steward.actions.sanitize import (
    norm_color,
    norm_enum,
    norm_text_align,
    to_bool,
    to_number,
    to_size,
    to_text,
)
from steward.canvas.bounds import text_extent
from steward.canvas.draw import draw_segments
from steward.canvas.styles import (
    GEO_ALIASES,
    GEO_KINDS,
    SHAPE_KINDS,
    fill_to_tldraw,
    size_for_font,
)

Record = dict[str, Any]


def norm_kind(value: Any) -> str | None:
    return norm_enum(value, SHAPE_KINDS, GEO_ALIASES)


def _n(shape: dict[str, Any], key: str, default: float = 0.0) -> float:
    v = to_number(shape.get(key))
    return default if v is None else v


def _fill(shape: dict[str, Any]) -> str:
    return fill_to_tldraw(shape.get("fill"))


def simple_to_record(shape: dict[str, Any], sid: str) -> Record | None:
    """Build a full record; None when the kind cannot be created (unknown, bad type)."""
    kind = norm_kind(shape.get("_type"))
    color = norm_color(shape.get("color"))
    text = to_text(shape.get("text"))
    meta = {"note": shape["note"]} if isinstance(shape.get("note"), str) and shape["note"] else None
    rec: Record
    if kind in GEO_KINDS:
        w = to_size(shape.get("w")) or 100.0
        h = to_size(shape.get("h")) or 100.0
        props: dict[str, Any] = {
            "geo": GEO_KINDS[kind],
            "w": w,
            "h": h,
            "color": color or "black",
            "labelColor": "black",
            "fill": _fill(shape),
            "dash": "draw",
            "size": "m",
            "font": "draw",
            "align": norm_text_align(shape.get("textAlign")) or "middle",
            "verticalAlign": "middle",
            "growY": 0.0,
            "text": text or "",
        }
        rec = {"type": "geo", "x": _n(shape, "x"), "y": _n(shape, "y"), "props": props}
    elif kind == "text":
        fsize = to_size(shape.get("fontSize")) or 24.0
        size, scale = size_for_font(fsize)
        align = norm_text_align(shape.get("textAlign")) or "start"
        width = to_size(shape.get("width"))
        wrap = bool(to_bool(shape.get("wrap"))) and bool(width)
        est_w, _ = text_extent(text or "", fsize)
        w = width if wrap and width else est_w
        x = _n(shape, "x")
        # The model's x anchors the alignment; records keep the left edge.
        left = x if align == "start" else (x - w / 2 if align == "middle" else x - w)
        props = {
            "text": text or "",
            "color": color or "black",
            "size": size,
            "font": "draw",
            "textAlign": align,
            "w": w,
            "autoSize": not wrap,
            "scale": scale,
        }
        rec = {"type": "text", "x": left, "y": _n(shape, "y"), "props": props}
    elif kind == "note":
        props = {
            "text": text or "",
            "color": color or "yellow",
            "size": "m",
            "font": "draw",
            "align": "middle",
            "verticalAlign": "middle",
            "growY": 0.0,
            "scale": 1.0,
        }
        rec = {"type": "note", "x": _n(shape, "x"), "y": _n(shape, "y"), "props": props}
    elif kind in ("arrow", "line"):
        x1, y1 = _n(shape, "x1"), _n(shape, "y1")
        x2, y2 = _n(shape, "x2", x1 + 100), _n(shape, "y2", y1)
        if kind == "arrow":
            props = {
                "start": {"x": 0.0, "y": 0.0},
                "end": {"x": x2 - x1, "y": y2 - y1},
                "bend": _n(shape, "bend"),
                "color": color or "black",
                "labelColor": "black",
                "fill": "none",
                "dash": "draw",
                "size": "m",
                "font": "draw",
                "arrowheadStart": "none",
                "arrowheadEnd": "arrow",
                "text": text or "",
            }
        else:
            props = {
                "points": [{"x": 0.0, "y": 0.0}, {"x": x2 - x1, "y": y2 - y1}],
                "color": color or "black",
                "dash": "draw",
                "size": "m",
                "spline": "line",
            }
        rec = {"type": kind, "x": x1, "y": y1, "props": props}
        if kind == "arrow":
            rec["bindings"] = {"start": shape.get("fromId"), "end": shape.get("toId")}
    elif kind == "pen":
        x, y = _n(shape, "x"), _n(shape, "y")
        w, h = to_size(shape.get("w")) or 100.0, to_size(shape.get("h")) or 100.0
        pts = [
            {"x": 0.0, "y": 0.0},
            {"x": w, "y": 0.0},
            {"x": w, "y": h},
            {"x": 0.0, "y": h},
            {"x": 0.0, "y": 0.0},
        ]
        props = {
            "segments": draw_segments(pts, straight=True),
            "color": color or "black",
            "fill": _fill(shape),
            "dash": "draw",
            "size": "m",
            "isComplete": True,
            "isClosed": True,
            "isPen": False,
        }
        rec = {"type": "draw", "x": x, "y": y, "props": props}
    else:
        return None
    rec = {"id": sid, **rec, "rotation": 0.0}
    if meta:
        rec["meta"] = meta
    return rec


def record_diff(old: Record, new: Record) -> dict[str, Any]:
    """update_shape params turning `old` into `new` (only what changed)."""
    params: dict[str, Any] = {"id": old["id"]}
    for key in ("type", "x", "y", "rotation"):
        if key in new and new.get(key) != old.get(key):
            params[key] = new[key]
    for group in ("props", "meta", "bindings"):
        a, b = old.get(group) or {}, new.get(group) or {}
        changed = {k: v for k, v in b.items() if a.get(k) != v}
        changed |= {k: None for k in a if k not in b and group != "props"}
        if changed:
            params[group] = changed
    return params
