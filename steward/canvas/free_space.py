"""Where new content can go: the free rectangle nearest to where the user is looking.

A place is free when it keeps `gap` away from every existing shape. Inside the viewport comes
first (nearest its centre, or beside an anchor shape when one is named); when the viewport is
full, the nearest free place just outside it, to the right and then below.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from steward.protocol.box import Box

GAP = 40.0
STEP = 20.0
MARGIN = 30.0  # kept clear along the viewport's edges
_SIDES = ("right", "below", "left", "above")


def is_free(box: Box, obstacles: Iterable[Box], gap: float = GAP) -> bool:
    padded = box.expand(gap - 0.5)  # touching at exactly `gap` is fine
    return not any(padded.intersects(o) for o in obstacles)


def fit_scale(w: float, h: float, view: Box, margin: float = MARGIN) -> float:
    """The factor (at most 1) that makes a w×h drawing fit inside the viewport."""
    room_w, room_h = max(view.w - 2 * margin, 1.0), max(view.h - 2 * margin, 1.0)
    return min(1.0, room_w / max(w, 1.0), room_h / max(h, 1.0))


def _scan(area: Box, w: float, h: float, centre: tuple[float, float]) -> list[Box]:
    """Every grid position of a w×h box inside `area`, nearest `centre` first."""
    if w > area.w or h > area.h:
        return []
    nx, ny = int((area.w - w) // STEP) + 1, int((area.h - h) // STEP) + 1
    boxes = [Box(area.x + i * STEP, area.y + j * STEP, w, h) for i in range(nx) for j in range(ny)]
    # The exact centre too: a drawing in an empty viewport sits in its middle.
    boxes.append(Box(centre[0] - w / 2, centre[1] - h / 2, w, h))
    cx, cy = centre
    boxes = [b for b in boxes if area.contains(b)]
    return sorted(boxes, key=lambda b: ((b.mid_x - cx) ** 2 + (b.mid_y - cy) ** 2, b.y, b.x))


def beside(anchor: Box, w: float, h: float, side: str, gap: float = GAP) -> Box:
    if side == "left":
        return Box(anchor.x - gap - w, anchor.y, w, h)
    if side == "above":
        return Box(anchor.x, anchor.y - gap - h, w, h)
    if side == "below":
        return Box(anchor.x, anchor.max_y + gap, w, h)
    return Box(anchor.max_x + gap, anchor.y, w, h)


def _slide(
    anchor: Box,
    w: float,
    h: float,
    side: str,
    gap: float,
    obstacles: list[Box],
    within: Box | None,
) -> Box | None:
    """The nearest free place on one side of the anchor: further out, then along the side."""
    first = beside(anchor, w, h, side, gap)
    out_x, out_y = {"right": (1, 0), "left": (-1, 0), "above": (0, -1), "below": (0, 1)}[side]
    for k in range(0, 60):
        for j in (0, *[d * n for n in range(1, 20) for d in (1, -1)]):
            box = Box(
                first.x + STEP * (out_x * k + out_y * j),
                first.y + STEP * (out_y * k + out_x * j),
                w,
                h,
            )
            if within is not None and not within.contains(box):
                continue
            if is_free(box, obstacles, gap):
                return box
    return None


@dataclass(frozen=True)
class Placer:
    """Places new drawings on one canvas: `inside` the viewport or, failing that, `anywhere`.
    With an anchor, a drawing goes beside it (on `side` first), never elsewhere in the view."""

    view: Box
    obstacles: list[Box]
    anchor: Box | None = None
    side: str | None = None
    gap: float = GAP

    def inside(self, w: float, h: float) -> Box | None:
        v = self.view
        inner = Box(v.x + MARGIN, v.y + MARGIN, v.w - 2 * MARGIN, v.h - 2 * MARGIN)
        if self.anchor is not None:
            sides = [self.side] if self.side else []
            for s in sides + [s for s in _SIDES if s not in sides]:
                box = _slide(self.anchor, w, h, s, self.gap, self.obstacles, inner)
                if box is not None:
                    return box
            return None
        for box in _scan(inner, w, h, (v.mid_x, v.mid_y)):
            if is_free(box, self.obstacles, self.gap):
                return box
        return None

    def anywhere(self, w: float, h: float) -> Box:
        box = self.inside(w, h)
        if box is not None:
            return box
        if self.anchor is not None:
            box = _slide(self.anchor, w, h, self.side or "right", self.gap, self.obstacles, None)
            if box is not None:
                return box
        # The nearest free place beside the viewport, rightwards then downwards.
        v, gap = self.view, self.gap
        for k in range(0, 400):
            for box in (
                Box(v.max_x + gap + k * STEP, v.y + MARGIN, w, h),
                Box(v.x + MARGIN, v.max_y + gap + k * STEP, w, h),
            ):
                if is_free(box, self.obstacles, gap):
                    return box
        return Box(v.max_x + gap, v.y, w, h)
