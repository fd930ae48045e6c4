"""The canvas as the scripted model is shown it: shapes with kind, text, colour, note and box.

`shapes_for_model` builds the list the request carries (model coordinates); `SeenCanvas`
answers the scripted model's questions about it: which shapes a request names, what it drew
last, and what space is taken.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from steward.canvas.bounds import shape_bounds
from steward.canvas.coords import CoordinateSpace
from steward.canvas.simple import model_type, to_simple
from steward.model.base import CanvasFacts
from steward.model.scripted.reading import Reading, words_of
from steward.protocol.box import Box, union

MAX_SHAPES = 400
# Notes the scripted model writes on what it draws: "drawing 3: flow chart of signup".
_DRAWING = re.compile(r"^drawing (\d+): (.*)$")


def seen_shapes(hint: Any) -> Any:
    """A request's `canvas` hint as the scripted model reads it: the list `shapes_for_model`
    makes of the steward's `CanvasFacts`; a list given as is (tests, plans) passes through."""
    if isinstance(hint, CanvasFacts):
        return shapes_for_model(hint.shapes, hint.coords)
    return hint


def shapes_for_model(
    shapes: Mapping[str, dict[str, Any]], coords: CoordinateSpace
) -> list[dict[str, Any]]:
    """Every shape (up to a cap) as {id, type, text, color, note, at, box}, model coordinates:
    `at` is the point `move` takes (x, y or x1, y1), `box` the page bounds."""
    out: list[dict[str, Any]] = []
    for sid, record in list(shapes.items())[:MAX_SHAPES]:
        simple = to_simple(record, dict(shapes))
        b = shape_bounds(record, shapes)
        ax = simple.get("x", simple.get("x1", b.x))
        ay = simple.get("y", simple.get("y1", b.y))
        out.append(
            {
                "id": sid,
                "type": model_type(record),
                "text": simple.get("text") or "",
                "color": simple.get("color", "black"),
                "note": simple.get("note", ""),
                "locked": bool(record.get("isLocked")),
                "ends": [simple.get("fromId"), simple.get("toId")] if "fromId" in simple else [],
                "at": [round(ax - coords.origin_x), round(ay - coords.origin_y)],
                "box": [
                    round(b.x - coords.origin_x),
                    round(b.y - coords.origin_y),
                    round(b.w),
                    round(b.h),
                ],
            }
        )
    return out


@dataclass(frozen=True)
class Seen:
    """One shape as the scripted model is shown it: kind, words, colour, note, position, box and
    bound ends."""

    id: str
    type: str
    text: str
    color: str
    note: str
    at: tuple[float, float]
    box: Box
    ends: tuple[str, ...] = ()  # an arrow's bound shapes

    @property
    def drawing(self) -> int | None:
        m = _DRAWING.match(self.note)
        return int(m.group(1)) if m else None

    @property
    def what(self) -> str:
        m = _DRAWING.match(self.note)
        return m.group(2) if m else self.note


def _seen(raw: Any) -> Seen | None:
    try:
        x, y, w, h = (float(v) for v in raw["box"])
        ax, ay = (float(v) for v in raw["at"])
        ends = tuple(str(e) for e in raw.get("ends") or [] if e)
        return Seen(
            str(raw["id"]),
            str(raw.get("type", "unknown")),
            str(raw.get("text") or ""),
            str(raw.get("color") or "black"),
            str(raw.get("note") or ""),
            (ax, ay),
            Box(x, y, w, h),
            ends,
        )
    except (KeyError, TypeError, ValueError):
        return None


class SeenCanvas:
    """The canvas a request shows the scripted model, with the questions it asks of it (which
    shapes, where there is room)."""

    def __init__(self, raw: list[Any] | None, selection: list[str] | None = None) -> None:
        self.shapes = [s for s in (_seen(r) for r in raw or []) if s is not None]
        self.by_id = {s.id: s for s in self.shapes}
        self.selection = [self.by_id[i] for i in selection or [] if i in self.by_id]

    def obstacles(self, skip: set[str] | None = None) -> list[Box]:
        return [s.box for s in self.shapes if not skip or s.id not in skip]

    def next_drawing(self) -> int:
        return max((s.drawing or 0 for s in self.shapes), default=0) + 1

    def last_drawing(self) -> list[Seen]:
        n = max((s.drawing or 0 for s in self.shapes), default=0)
        return [s for s in self.shapes if n and s.drawing == n]

    def drawing_named(self, word: str) -> list[Seen]:
        """The latest drawing whose note mentions `word` ("chart" → the flow chart)."""
        word = "flow chart" if word in ("flowchart", "flow") else word
        numbers = sorted(
            {s.drawing for s in self.shapes if s.drawing and word in s.what}, reverse=True
        )
        return [s for s in self.shapes if numbers and s.drawing == numbers[0]]

    def of_kinds(self, kinds: list[str]) -> list[Seen]:
        return [s for s in self.shapes if s.type in kinds]

    def with_text(self, r: Reading) -> list[Seen]:
        """Shapes whose text the request quotes or names in full ("delete the welcome step")."""
        quoted = [q.lower() for q in r.quoted]
        asked = set(words_of(r.low))
        out = []
        for s in self.shapes:
            text = s.text.lower()
            if not text:
                continue
            if quoted and any(q in text or text in q for q in quoted):
                out.append(s)
            elif not quoted:
                own = set(words_of(text))
                if own and own <= asked:
                    out.append(s)
        return out

    def named(self, r: Reading) -> list[Seen]:
        """What a request points at: by text, by drawing ("the chart"), by kind."""
        found = self.with_text(r)
        if found:
            return found
        if r.group_word:
            found = self.drawing_named(r.group_word)
            if found:
                return found
        if r.kinds:
            return self.of_kinds(r.kinds)
        return []

    def attached(self, shapes: list[Seen]) -> list[Seen]:
        """Arrows bound to any of `shapes` (they would be left hanging without them)."""
        ids = {s.id for s in shapes}
        return [s for s in self.shapes if s.id not in ids and ids.intersection(s.ends)]

    def bounds(self, shapes: list[Seen]) -> Box | None:
        return union(s.box for s in shapes)
