"""The quality report of a run, read off the canvas after it: what a careful drawer avoids.

Six counts, each with the shapes at fault: unintended overlaps (see `_unintended`; strokes
judged by the lines they draw, `steward.canvas.strokes`), text
overflowing its shape, arrows with a loose end, shapes
outside the run's task bounds, shapes outside the asker's viewport, and shapes left locked
or partial. Only what the run touched is judged (everything when `touched` is None), against
the whole canvas; only what it created counts as drawn outside the viewport. `lints()` words
the problems for the model's next turn; `RunShapes` follows what a run touched.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from steward.canvas.bounds import (
    CHAR_WIDTH_EM,
    LINE_HEIGHT_EM,
    font_size,
    label_font_size,
    num,
    shape_bounds,
)
from steward.canvas.strokes import crosses, enters, inside, is_stroke, stroke_path
from steward.protocol.box import Box

LABEL_PAD = 16.0  # tldraw's padding between a label and its shape's edge
MAX_LINTS = 20
# Shapes that hold others by design and never overlap "by mistake".
_CONTAINERS = ("frame", "group")
# How far (page px) an inner shape may stick out of its holder and still count as inside.
_NEST_SLACK = 2.0
# How many times bigger than a shape a textless area behind it must be to be its background.
_BACKGROUND_RATIO = 2.0


class _Box(Protocol):
    x: float
    y: float
    w: float
    h: float


@dataclass
class QualityReport:
    """The shapes at fault after a run, one list per kind of flaw a careful drawer avoids."""

    overlaps: list[tuple[str, str]] = field(default_factory=list)
    # The overlaps that are two strokes crossing (worded as such).
    crossings: set[tuple[str, str]] = field(default_factory=set)
    # The overlaps of two texts the same run drew (the only overlap of one run's own shapes
    # that is flagged: they hide each other's words).
    text_pairs: set[tuple[str, str]] = field(default_factory=set)
    overflowing_text: list[str] = field(default_factory=list)
    loose_arrows: list[str] = field(default_factory=list)
    outside_bounds: list[str] = field(default_factory=list)
    outside_viewport: list[str] = field(default_factory=list)
    locked_or_partial: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "unintended_overlaps": len(self.overlaps),
            "overflowing_text": len(self.overflowing_text),
            "loose_arrows": len(self.loose_arrows),
            "outside_bounds": len(self.outside_bounds),
            "outside_viewport": len(self.outside_viewport),
            "locked_or_partial": len(self.locked_or_partial),
        }

    def problems(self) -> dict[str, int]:
        return {k: v for k, v in self.counts().items() if v}

    def lints(self) -> list[str]:
        # What the steward knows: the two were not drawn together by this run (not that they
        # are not one drawing: a request may ask to put one on the other).
        out = [
            f"shapes {a!r} and {b!r} overlap and their words hide each other; move one of them"
            if (a, b) in self.text_pairs
            else f"strokes {a!r} and {b!r} cross and were not drawn together; unless the request"
            " meant it, move or redraw yours so they do not"
            if (a, b) in self.crossings
            else f"shapes {a!r} and {b!r} overlap and were not drawn together; unless the request"
            " meant it, move yours into free space"
            for a, b in self.overlaps
        ]
        out += [
            f"the text of {s!r} overflows it; make it bigger or shorten the text"
            for s in self.overflowing_text
        ]
        out += [
            f"arrow {s!r} has a loose end; unless it was meant to stand free (a compass needle, a"
            " pointer into space), bind both ends to shapes"
            for s in self.loose_arrows
        ]
        out += [f"{s!r} is outside your task's bounds" for s in self.outside_bounds]
        out += [
            f"{s!r} is outside the asker's view; unless they asked for it there, move it into"
            " view, else say in your message where it is"
            for s in self.outside_viewport
        ]
        out += [f"{s!r} is still locked or partial" for s in self.locked_or_partial]
        return out[:MAX_LINTS]


# Wire verbs that name the shapes they change: in `id` or in `ids`.
_CHANGES = frozenset(
    {
        "create_shape",
        "update_shape",
        "move",
        "resize",
        "rotate",
        "align",
        "distribute",
        "stack",
        "reorder",
        "group",
        "ungroup",
    }
)


@dataclass
class RunShapes:
    """The shapes a run made or changed (`touched`) and made (`created`), in order, kept up
    to date from its final wire actions; deleted shapes leave both."""

    touched: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)

    def note(self, name: str, params: Mapping[str, Any]) -> None:
        ids = params.get("ids")
        named = [str(i) for i in ids] if isinstance(ids, list) else []
        if isinstance(params.get("id"), str):
            named.append(str(params["id"]))
        if name == "delete_shape":
            for i in named:
                for kept in (self.touched, self.created):
                    while i in kept:
                        kept.remove(i)
        elif name in _CHANGES:
            self.touched.extend(i for i in named if i not in self.touched)
            if name == "create_shape":
                self.created.extend(i for i in named if i not in self.created)


def add_counts(total: dict[str, int], counts: Mapping[str, int] | None) -> dict[str, int]:
    """Sums reports' counts (a run that did not finish may have none)."""
    for key, value in (counts or {}).items():
        total[key] = total.get(key, 0) + value
    return total


def _rect(box: _Box | Box) -> Box:
    return Box(float(box.x), float(box.y), float(box.w), float(box.h))


def _top_level(shape: Mapping[str, Any], shapes: Mapping[str, Any]) -> bool:
    return str(shape.get("parentId") or "") not in shapes


def _wrapped_lines(text: str, width: float, size: float) -> tuple[int, bool]:
    """(lines needed, whether a single word is wider than the width)."""
    per_line = max(int(width // (CHAR_WIDTH_EM * size)), 1)
    lines, too_wide = 0, False
    for paragraph in text.split("\n"):
        used = -1
        lines += 1
        for word in paragraph.split():
            too_wide = too_wide or len(word) > per_line
            need = len(word) if used < 0 else used + 1 + len(word)
            if used >= 0 and need > per_line:
                lines += 1 + (len(word) - 1) // per_line
                used = len(word) % per_line or per_line
            else:
                used = need
    return lines, too_wide


def overflows(shape: Mapping[str, Any]) -> bool:
    props: Mapping[str, Any] = shape.get("props") or {}
    kind = shape.get("type")
    if kind in ("geo", "note") and num(props.get("growY")) > 0:
        return True  # the browser grew it to fit: the drawing no longer has its planned size
    text = props.get("text")
    if not isinstance(text, str) or not text.strip():
        return False
    size = label_font_size(props) if kind in ("geo", "note") else font_size(props)
    if kind == "geo":
        w, h = num(props.get("w"), 1.0), num(props.get("h"), 1.0)
        lines, too_wide = _wrapped_lines(text, w - 2 * LABEL_PAD, size)
        return too_wide or lines * LINE_HEIGHT_EM * size + 2 * LABEL_PAD > h + 0.5
    if kind == "note":
        side = 200.0 * num(props.get("scale"), 1.0)
        lines, _ = _wrapped_lines(text, side - 2 * LABEL_PAD, size)
        return lines * LINE_HEIGHT_EM * size + 2 * LABEL_PAD > side + 0.5
    if kind == "text" and props.get("autoSize") is False:
        _, too_wide = _wrapped_lines(text, num(props.get("w"), 1.0), size)
        return too_wide
    return False


def _loose(shape: Mapping[str, Any], shapes: Mapping[str, Any]) -> bool:
    binds = shape.get("bindings") or {}
    return not all(binds.get(end) in shapes for end in ("start", "end"))


def _overlap(a: Box, b: Box) -> bool:
    w = min(a.max_x, b.max_x) - max(a.x, b.x)
    h = min(a.max_y, b.max_y) - max(a.y, b.y)
    return w > 1.0 and h > 1.0


def _contains(outer: Box, inner: Box) -> bool:
    return outer.expand(_NEST_SLACK).contains(inner)


def _has_text(shape: Mapping[str, Any]) -> bool:
    text = (shape.get("props") or {}).get("text")
    return isinstance(text, str) and bool(text.strip())


@dataclass(frozen=True)
class _Item:
    """A top-level shape as the overlap test sees it: its box, its place in the stacking
    order, and for a stroke the line it draws."""

    box: Box
    depth: int
    path: list[tuple[float, float]] | None
    shape: Mapping[str, Any]

    @property
    def area(self) -> bool:
        """Whether it covers an area (a box, or a closed stroke), not only a line."""
        return self.path is None or bool((self.shape.get("props") or {}).get("isClosed"))


def _meets(a: _Item, b: _Item) -> bool:
    """Whether `a` and `b` really overlap, by their geometry: boxes by their boxes (one inside
    the other is nesting, not overlap), a stroke by the line it draws (running into a box it
    does not lie wholly inside, or crossing another stroke)."""
    if a.path is None and b.path is None:
        return _overlap(a.box, b.box) and not (_contains(a.box, b.box) or _contains(b.box, a.box))
    if a.path is not None and b.path is not None:
        return crosses(a.path, b.path)
    line, box = (a, b) if a.path is not None else (b, a)
    assert line.path is not None
    return enters(line.path, box.box) and not inside(line.path, box.box, _NEST_SLACK)


def _background(lower: _Item, upper: _Item) -> bool:
    """Whether `lower` is a background `upper` stands on or in: behind it, an area without
    text, far bigger (a sky, a ground, a field, a hill), and `upper` within its width (a house
    may rise above the ground it stands on, not hang off its side)."""
    big = lower.box.w * lower.box.h >= _BACKGROUND_RATIO * max(upper.box.w * upper.box.h, 1.0)
    wide = (
        lower.box.x - _NEST_SLACK <= upper.box.x
        and upper.box.max_x <= lower.box.max_x + _NEST_SLACK
    )
    return lower.depth < upper.depth and lower.area and big and wide and not _has_text(lower.shape)


def _unintended(a: str, b: str, items: Mapping[str, _Item], one_run: set[str]) -> bool:
    """Whether `a` and `b` overlap by mistake rather than as one drawing's parts.

    Not a mistake: one shape inside the other (a window in a wall, a label on a box), a shape
    standing on or in a background behind it, and two shapes the same run created when at
    most one of them carries text: a run places both of its own shapes knowingly, so where
    they meet they form one object (a crown on a trunk, a roof on a wall). A mistake: any
    other overlap (with another run's or a user's shape, which the run did not place), and
    two texts of one run over each other, which hide each other's words whatever was meant.
    """
    ia, ib = items[a], items[b]
    if not _meets(ia, ib) or _background(ia, ib) or _background(ib, ia):
        return False
    if a in one_run and b in one_run:
        return _has_text(ia.shape) and _has_text(ib.shape)
    return True


def _items(shapes: Mapping[str, Mapping[str, Any]]) -> dict[str, _Item]:
    out: dict[str, _Item] = {}
    for depth, (sid, s) in enumerate(shapes.items()):
        if s.get("type") in _CONTAINERS or not _top_level(s, shapes):
            continue
        box = shape_bounds(s, shapes)
        if not all(math.isfinite(v) for v in (box.x, box.y, box.w, box.h)):
            continue
        path = stroke_path(s) if is_stroke(s) else None
        out[sid] = _Item(box, depth, path, s)
    return out


def _bound_to(shape: Mapping[str, Any]) -> set[str]:
    binds = shape.get("bindings") or {}
    return {str(v) for v in binds.values() if isinstance(v, str)}


def _overlaps(
    shapes: Mapping[str, Mapping[str, Any]], judged: set[str], one_run: set[str]
) -> list[tuple[str, str]]:
    """Every unintended overlap involving a judged shape, each pair once, in a fixed order:
    the same canvas gives the same list whatever order the shapes are judged in."""
    items = _items(shapes)
    # A stroke's box may be flat (a level line): grown a little so the sweep still meets it.
    reach = {
        sid: it.box.expand(_NEST_SLACK) if it.path is not None else it.box
        for sid, it in items.items()
    }
    order = sorted(items, key=lambda i: (reach[i].x, i))
    found: set[tuple[str, str]] = set()
    for n, a in enumerate(order):  # sweep by x: only neighbours can overlap
        ra = reach[a]
        for b in order[n + 1 :]:
            rb = reach[b]
            if rb.x >= ra.max_x:
                break
            if (a not in judged and b not in judged) or not ra.intersects(rb):
                continue
            if b in _bound_to(items[a].shape) or a in _bound_to(items[b].shape):
                continue  # an arrow meets the shapes it joins
            if _unintended(a, b, items, one_run):
                found.add((a, b) if a < b else (b, a))
    return sorted(found)


def quality_report(
    shapes: Mapping[str, Mapping[str, Any]],
    *,
    touched: Iterable[str] | None = None,
    created: Iterable[str] | None = None,
    viewport: _Box | Box | None = None,
    task_bounds: Iterable[_Box | Box] | None = None,
    partial: Iterable[str] = (),
) -> QualityReport:
    judged = list(shapes) if touched is None else [i for i in dict.fromkeys(touched) if i in shapes]
    judged_set = set(judged)
    # Shapes of this one run (their overlaps may be one drawing's parts); unknown: none.
    one_run = set(created) if created is not None else set()
    report = QualityReport()
    report.overlaps = _overlaps(shapes, judged_set, one_run)
    report.crossings = {pair for pair in report.overlaps if all(is_stroke(shapes[i]) for i in pair)}
    report.text_pairs = {pair for pair in report.overlaps if set(pair) <= one_run}
    view = _rect(viewport) if viewport is not None else None
    # Drawn outside the view: what the run made (when known), not what it only changed.
    made = set(judged) if created is None else one_run
    areas = [_rect(b) for b in task_bounds or []]
    in_flight = set(partial)
    for sid in judged:
        s = shapes[sid]
        if overflows(s):
            report.overflowing_text.append(sid)
        if s.get("type") == "arrow" and _loose(s, shapes):
            report.loose_arrows.append(sid)
        if not _top_level(s, shapes):
            continue
        box = shape_bounds(s, shapes)
        if not all(math.isfinite(v) for v in (box.x, box.y, box.w, box.h)):
            continue
        if areas and not any(a.expand(0.5).contains(box) for a in areas):
            report.outside_bounds.append(sid)
        if view is not None and sid in made and not view.expand(0.5).contains(box):
            report.outside_viewport.append(sid)
        if s.get("isLocked") or sid in in_flight:
            report.locked_or_partial.append(sid)
    return report
