"""The task areas drawn on the low-detail image around a working fairy's task area: each
area's outline, dashed, with its name in a small white tag at its top-left corner ("your
task" for the fairy's own), so the image shows where the areas its caption names are.

A picture that cannot be decoded goes on as it came (logged): the caption still gives every
area's box in the request's frame.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import replace

from PIL import Image, ImageDraw, ImageFont

from steward.obs.logging import get_logger
from steward.ports import Picture
from steward.protocol.box import Box

log = get_logger(__name__)

OWN_LABEL = "your task"
# Dark grey dashes over a white underlay: they read on any drawing and no drawn shape has
# them (the canvas draws no dashed grey boxes of its own on the image).
INK = (40, 40, 40)
UNDER = (255, 255, 255)
DASH, GAP, WIDTH = 6, 4, 2
FONT_SIZE = 11
_FORMATS = {"image/webp": "WEBP", "image/jpeg": "JPEG", "image/png": "PNG"}


def _dashes(draw: ImageDraw.ImageDraw, a: tuple[float, float], b: tuple[float, float]) -> None:
    (x0, y0), (x1, y1) = a, b
    length = max(abs(x1 - x0), abs(y1 - y0))
    step = 0.0
    while step < length:
        end = min(step + DASH, length)
        p = (x0 + (x1 - x0) * step / length, y0 + (y1 - y0) * step / length)
        q = (x0 + (x1 - x0) * end / length, y0 + (y1 - y0) * end / length)
        draw.line([p, q], fill=UNDER, width=WIDTH + 2)
        draw.line([p, q], fill=INK, width=WIDTH)
        step += DASH + GAP


def _outline(draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float]) -> None:
    x0, y0, x1, y1 = box
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    for k, corner in enumerate(corners):
        _dashes(draw, corner, corners[(k + 1) % 4])


def _tag(draw: ImageDraw.ImageDraw, at: tuple[float, float], label: str) -> None:
    font = ImageFont.load_default(size=FONT_SIZE)
    left, top, right, bottom = draw.textbbox(at, label, font=font)
    draw.rectangle((left - 2, top - 1, right + 2, bottom + 1), fill=UNDER, outline=INK)
    draw.text(at, label, fill=INK, font=font)


def outlined(picture: Picture, own: Box, others: Sequence[tuple[str, Box]]) -> Picture:
    """`picture` with `own` (tagged "your task") and each named area of `others` that lies
    in it outlined and tagged; the picture as it came when it cannot be decoded."""
    b = picture.bounds
    try:
        image = Image.open(io.BytesIO(picture.data)).convert("RGB")
    except Exception as err:  # undecodable: the caption still says where the areas are
        log.warning("around_outline_skipped", error=repr(err)[:200])
        return picture
    sx, sy = image.width / max(b.w, 1e-9), image.height / max(b.h, 1e-9)
    shown = b
    draw = ImageDraw.Draw(image)
    areas = [*((name, r) for name, r in others if r.intersects(shown)), (OWN_LABEL, own)]
    for _, r in areas:
        box = ((r.x - b.x) * sx, (r.y - b.y) * sy, (r.max_x - b.x) * sx, (r.max_y - b.y) * sy)
        _outline(draw, box)
    for name, r in areas:  # tags over every outline, inside each area's top-left corner
        x = min(max((r.x - b.x) * sx, 0.0), image.width - 1.0) + 4
        y = min(max((r.y - b.y) * sy, 0.0), image.height - 1.0) + 3
        _tag(draw, (x, y), name)
    out = io.BytesIO()
    fmt = _FORMATS.get(picture.media_type, "PNG")
    image.save(out, format=fmt, **({"quality": 85} if fmt != "PNG" else {}))
    media = picture.media_type if picture.media_type in _FORMATS else "image/png"
    return replace(picture, data=out.getvalue(), media_type=media)
