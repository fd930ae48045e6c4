"""A synthetic JPEG of a canvas, of realistic size, drawn with Pillow."""

from __future__ import annotations

import io
import random
from typing import Any

from PIL import Image, ImageDraw


def render_jpeg(
    shapes: dict[str, dict[str, Any]],
    *,
    width: int = 1280,
    height: int = 800,
    seed: int = 0,
    quality: int = 80,
    scale: float = 1.0,
) -> bytes:
    """Boxes for shapes on a lightly textured background (a few hundred KB, like a real one)."""
    rng = random.Random(seed)
    image = Image.new("RGB", (width, height), (250, 250, 248))
    draw = ImageDraw.Draw(image)
    # Texture so the JPEG is not trivially small: a grid plus scattered strokes.
    for x in range(0, width, 24):
        draw.line([(x, 0), (x, height)], fill=(232, 232, 230))
    for y in range(0, height, 24):
        draw.line([(0, y), (width, y)], fill=(232, 232, 230))
    for _ in range(600):
        x, y = rng.randrange(width), rng.randrange(height)
        shade = rng.randrange(120, 220)
        draw.line(
            [(x, y), (x + rng.randrange(-30, 30), y + rng.randrange(-30, 30))],
            fill=(shade, shade - 20, shade + 20),
            width=rng.randrange(1, 3),
        )
    for shape in shapes.values():
        props = shape.get("props") or {}
        left, top = float(shape.get("x") or 0) * scale, float(shape.get("y") or 0) * scale
        w, h = float(props.get("w") or 120) * scale, float(props.get("h") or 60) * scale
        draw.rectangle([(left, top), (left + w, top + h)], outline=(40, 90, 200), width=3)
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()
