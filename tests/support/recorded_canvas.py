"""A canvas a scenario run left in its browsers (tldraw records, as `by-hand tabs shapes`
saved them), compared with the steward's mirror after a replay of that run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Shapes = dict[str, dict[str, Any]]
Binding = tuple[str, str, str]  # (arrow id, terminal, shape id)


def plain_text(node: Any) -> str:
    """The plain text of a tldraw rich-text document (or a plain string)."""
    if isinstance(node, str):
        return node
    if isinstance(node, dict):
        own = node.get("text")
        inner = "".join(plain_text(c) for c in node.get("content") or [])
        return (own if isinstance(own, str) else "") + inner
    return ""


def facts(shape: dict[str, Any]) -> dict[str, Any]:
    """What a user sees of a shape: kind, colour, fill, text (places are compared apart)."""
    p = shape.get("props") or {}
    return {
        "type": shape["type"],
        "geo": p.get("geo"),
        "color": p.get("color"),
        "fill": p.get("fill"),
        "text": plain_text(p.get("richText")) or plain_text(p.get("text")),
    }


def load(path: Path) -> tuple[Shapes, set[Binding]]:
    records = json.loads(path.read_text(encoding="utf-8"))
    shapes = {r["id"].removeprefix("shape:"): r for r in records if r.get("typeName") == "shape"}
    bindings = {
        (
            r["fromId"].removeprefix("shape:"),
            r["props"]["terminal"],
            r["toId"].removeprefix("shape:"),
        )
        for r in records
        if r.get("typeName") == "binding"
    }
    return shapes, bindings


def _close(a: Any, b: Any) -> bool:
    return abs(float(a) - float(b)) <= 1.0


def _points(value: Any) -> list[tuple[float, float]]:
    """A line's points in order, whether keyed by id (with an index) or listed."""
    items = (
        sorted(value.values(), key=lambda p: str(p.get("index", "")))
        if isinstance(value, dict)
        else list(value or [])
    )
    return [(float(p["x"]), float(p["y"])) for p in items]


def assert_same_canvas(shapes: Shapes, recorded: Path) -> None:
    """The replayed canvas is the recorded one: same ids, kinds, styles, texts, and places
    and sizes within 1 px (auto-sized text is as wide as the browser measured it)."""
    want, want_bindings = load(recorded)
    assert shapes and set(shapes) == set(want), sorted(set(shapes) ^ set(want))
    for sid, w in want.items():
        got = shapes[sid]
        assert facts(got) == facts(w), sid
        assert _close(got["x"], w["x"]) and _close(got["y"], w["y"]), (sid, got, w)
        gp, wp = got["props"], w["props"]
        for f in ("h",) if wp.get("autoSize") else ("w", "h"):
            if f in wp:
                assert _close(gp[f], wp[f]), (sid, f, gp[f], wp[f])
        for end in ("start", "end"):
            if end in wp:
                assert _close(gp[end]["x"], wp[end]["x"]) and _close(gp[end]["y"], wp[end]["y"])
        if "points" in wp:
            got_points, want_points = _points(gp["points"]), _points(wp["points"])
            assert len(got_points) == len(want_points), sid
            assert all(
                _close(a[0], b[0]) and _close(a[1], b[1])
                for a, b in zip(got_points, want_points, strict=True)
            ), (sid, got_points, want_points)
    got_bindings = {
        (sid, terminal, to)
        for sid, s in shapes.items()
        for terminal, to in (s.get("bindings") or {}).items()
        if to
    }
    assert got_bindings == want_bindings
