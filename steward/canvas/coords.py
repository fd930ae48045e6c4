"""Chat-origin offset and integer rounding for what the model sees, with an exact way back.

The model reads coordinates relative to the point where the chat started, rounded to
integers (fewer tokens, fewer mistakes). Every rounded value sent is remembered with its
exact original, keyed by shape id and field; when the model sends that same integer back for
that same field, the original is restored, so a round trip changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

# Fields of a model-facing shape (or box) that are x or y coordinates, or plain sizes.
X_FIELDS = ("x", "x1", "x2")
Y_FIELDS = ("y", "y1", "y2")
SIZE_FIELDS = ("w", "h", "width", "fontSize")


def _round(v: float) -> int:
    # Half away from zero: the same in every language the numbers may be re-checked in.
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


@dataclass
class CoordinateSpace:
    """Page ⇄ model coordinates for one chat."""

    origin_x: float = 0.0
    origin_y: float = 0.0
    # (key, field) → (integer sent to the model, exact page value)
    _saved: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)

    @classmethod
    def at(cls, x: float, y: float) -> CoordinateSpace:
        """The frame whose 0, 0 is page point (x, y) rounded as every coordinate is (half
        away from zero): a view that starts there starts at 0, 0, and frames of several
        runs differ by whole shifts."""
        return cls(float(_round(x)), float(_round(y)))

    @property
    def fresh(self) -> bool:
        """Nothing was sent to the model yet: the origin may still move."""
        return not self._saved

    def _out(self, key: str, fname: str, page_value: float, offset: float) -> int:
        r = _round(page_value - offset)
        self._saved[(key, fname)] = (r, page_value)
        return r

    def _in(self, key: str, fname: str, model_value: float, offset: float) -> float:
        saved = self._saved.get((key, fname))
        if saved is not None and saved[0] == model_value:
            return saved[1]
        return model_value + offset

    # -- points and boxes ---------------------------------------------------------------
    def point_to_model(self, key: str, x: float, y: float) -> tuple[int, int]:
        return self._out(key, "x", x, self.origin_x), self._out(key, "y", y, self.origin_y)

    def point_from_model(self, key: str, x: float, y: float) -> tuple[float, float]:
        return self._in(key, "x", x, self.origin_x), self._in(key, "y", y, self.origin_y)

    def box_to_model(self, key: str, box: dict[str, float]) -> dict[str, int]:
        out = self.shape_to_model({**box, "shapeId": key})
        out.pop("shapeId", None)
        return out

    def box_from_model(self, key: str, box: dict[str, float]) -> dict[str, float]:
        out = self.shape_from_model({**box, "shapeId": key})
        out.pop("shapeId", None)
        return out

    # -- shapes (model-facing dicts: x/y, x1/y1/x2/y2, w/h ...) -------------------------
    def shape_to_model(self, shape: dict[str, Any]) -> dict[str, Any]:
        key = str(shape.get("shapeId", ""))
        out = dict(shape)
        for fname in (*X_FIELDS, *Y_FIELDS, *SIZE_FIELDS):
            v = shape.get(fname)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                offset = (
                    self.origin_x
                    if fname in X_FIELDS
                    else self.origin_y
                    if fname in Y_FIELDS
                    else 0.0
                )
                out[fname] = self._out(key, fname, float(v), offset)
        return out

    def shape_from_model(self, shape: dict[str, Any]) -> dict[str, Any]:
        key = str(shape.get("shapeId", ""))
        out = dict(shape)
        for fname in (*X_FIELDS, *Y_FIELDS, *SIZE_FIELDS):
            v = shape.get(fname)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                offset = (
                    self.origin_x
                    if fname in X_FIELDS
                    else self.origin_y
                    if fname in Y_FIELDS
                    else 0.0
                )
                out[fname] = self._in(key, fname, float(v), offset)
        return out

    # -- lines the steward writes (display only, nothing remembered) -------------------
    def frame_x(self, v: float) -> int:
        """A page x as this chat's model reads it: offset and rounded like every shape."""
        return _round(v - self.origin_x)

    def frame_y(self, v: float) -> int:
        return _round(v - self.origin_y)

    def point_text(self, x: float, y: float) -> str:
        return f"({self.frame_x(x)}, {self.frame_y(y)})"

    def box_text(self, x: float, y: float, w: float, h: float) -> str:
        """`x=…, y=…, w=…, h=…` of a page box, in this chat's frame and rounding."""
        return f"x={self.frame_x(x)}, y={self.frame_y(y)}, w={_round(w)}, h={_round(h)}"

    def x_from_model(self, v: float) -> float:
        return v + self.origin_x

    def y_from_model(self, v: float) -> float:
        return v + self.origin_y
