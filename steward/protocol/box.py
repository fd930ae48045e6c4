"""`Box`: the one rectangle type, an axis-aligned area of the page (x, y, w, h).

A viewport, a selection's bounds, a task's area, a shape's page bounds: every rectangle in
the steward, on the wire and off it, is a `Box`. It is a frozen dataclass rather than a wire
model so the canvas code can make millions of them cheaply; pydantic validates it where a
message carries one (no extra fields, finite numbers, no negative size).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, ClassVar

from pydantic import ConfigDict, Field

from steward.protocol.limits import MAX_COORD, MAX_SIZE


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle in page coordinates."""

    # Read by pydantic where a wire message holds a Box: the wire models' own rules.
    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(extra="forbid", allow_inf_nan=False)

    x: float
    y: float
    w: Annotated[float, Field(ge=0)]
    h: Annotated[float, Field(ge=0)]

    @property
    def max_x(self) -> float:
        return self.x + self.w

    @property
    def max_y(self) -> float:
        return self.y + self.h

    @property
    def mid_x(self) -> float:
        return self.x + self.w / 2

    @property
    def mid_y(self) -> float:
        return self.y + self.h / 2

    def expand(self, pad: float) -> Box:
        return Box(self.x - pad, self.y - pad, self.w + 2 * pad, self.h + 2 * pad)

    def intersects(self, other: Box) -> bool:
        return (
            self.x < other.max_x
            and other.x < self.max_x
            and self.y < other.max_y
            and other.y < self.max_y
        )

    def contains(self, other: Box) -> bool:
        return (
            self.x <= other.x
            and self.y <= other.y
            and self.max_x >= other.max_x
            and self.max_y >= other.max_y
        )

    def to_dict(self) -> dict[str, float]:
        return {"x": self.x, "y": self.y, "w": self.w, "h": self.h}


def union(boxes: Iterable[Box]) -> Box | None:
    """The smallest box holding all of `boxes` (None for none)."""
    items = list(boxes)
    if not items:
        return None
    x0 = min(b.x for b in items)
    y0 = min(b.y for b in items)
    x1 = max(b.max_x for b in items)
    y1 = max(b.max_y for b in items)
    return Box(x0, y0, x1 - x0, y1 - y0)


def bounded_box(box: Box | None) -> Box | None:
    """A box a browser or an API caller sent, within geometry's bounds (`MAX_COORD`,
    `MAX_SIZE`): past them, sums and products of finite numbers overflow to NaN."""
    if box is None:
        return None
    if max(abs(box.x), abs(box.y)) > MAX_COORD or max(box.w, box.h) > MAX_SIZE:
        raise ValueError(f"a box must lie within ±{MAX_COORD:g} and measure at most {MAX_SIZE:g}")
    return box
