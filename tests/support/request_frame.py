"""What a request's words show of its frame: page coordinates leaking into a request far from
the page's origin, and numbers of the steward's own lines that are not rounded."""

from __future__ import annotations

import re

# No coordinate of a request's own frame comes near this; a page one always does.
LEAK = 10_000
# Where numbers stand as coordinates: `x=12`, `"x":12`, `at (12, 34)`, `x 12 to 34`.
_COORDS = re.compile(
    r'(?:\b(?:x|y|x1|y1|x2|y2|originX|originY)=|"(?:x|y|x1|y1|x2|y2|originX|originY)":'
    r"|\bat \(|, (?=-?\d+(?:\.\d+)?\))|\b[xy] (?=-?\d+(?:\.\d+)? to )| to )(-?\d+(?:\.\d+)?)"
)
# The steward's own lines: whole numbers, as every listed shape.
_STEWARD = re.compile(r"\b(?:x|y|w|h)=(-?\d+(?:\.\d+)?)|\bat \((-?[\d.]+), (-?[\d.]+)\)")


def frame_leaks(said: str) -> list[str]:
    """Coordinates that look like the page's. A fairy waiting far from the view (at the
    page's start) may have big numbers, only when its line says it is far outside the view."""
    said = re.sub(r"^- fairy-\d+ .*, far outside your view$", "", said, flags=re.M)
    return [m.group(0) for m in _COORDS.finditer(said) if abs(float(m.group(1))) >= LEAK]


def unrounded_numbers(said: str) -> list[str]:
    return [
        m.group(0)
        for m in _STEWARD.finditer(said)
        if any(g is not None and not float(g).is_integer() for g in m.groups())
    ]
