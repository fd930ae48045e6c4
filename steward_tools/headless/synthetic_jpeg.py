"""A synthetic JPEG of a canvas, of realistic size, drawn with Pillow; fitted to a byte budget
the way browsers fit theirs (client-bridge `image-encoding.ts`): lower quality first, then
scale, never under `MIN_LONG_SIDE`, keeping the first encoding within budget."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, replace
from typing import Any

from PIL import Image, ImageDraw

# The browsers' steps: 0.6 keeps labels legible; each scale step is x0.8 at the last quality.
QUALITY_STEPS: tuple[float, ...] = (0.6, 0.45, 0.3)
SCALE_STEP = 0.8
MIN_LONG_SIDE = 320


@dataclass(frozen=True)
class Fitted:
    """The chosen encoding: its bytes, quality, scale (of the rendered size) and tries."""

    data: bytes
    quality: float
    scale: float
    width: int
    height: int
    tries: int


def budget_steps(long_side: int) -> list[tuple[float, float]]:
    """(quality, scale) in the order tried: each quality at full size, then smaller sizes at
    the lowest quality down to `MIN_LONG_SIDE` (never upscaling a smaller image)."""
    steps = [(q, 1.0) for q in QUALITY_STEPS]
    floor = min(1.0, MIN_LONG_SIDE / max(long_side, 1))
    scale = 1.0
    while scale > floor:
        scale = max(floor, scale * SCALE_STEP)
        steps.append((QUALITY_STEPS[-1], scale))
    return steps


def fit_jpeg(image: Image.Image, max_bytes: int) -> Fitted:
    """The first step's JPEG within `max_bytes`, or the smallest one when none fits."""
    smallest: Fitted | None = None
    steps = budget_steps(max(image.size))
    for tries, (quality, scale) in enumerate(steps, start=1):
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        frame = image if scale == 1.0 else image.resize(size, Image.Resampling.BILINEAR)
        got = Fitted(_jpeg(frame, round(quality * 100)), quality, scale, *size, tries)
        if len(got.data) <= max_bytes:
            return got
        if smallest is None or len(got.data) < len(smallest.data):
            smallest = got
    assert smallest is not None  # budget_steps is never empty
    return replace(smallest, tries=len(steps))


def render_canvas(
    shapes: dict[str, dict[str, Any]],
    *,
    width: int = 1280,
    height: int = 800,
    seed: int = 0,
    scale: float = 1.0,
) -> Image.Image:
    """Boxes for shapes on a lightly textured background (a realistic amount of detail)."""
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
    return image


def render_jpeg(
    shapes: dict[str, dict[str, Any]],
    *,
    width: int = 1280,
    height: int = 800,
    seed: int = 0,
    quality: int = 80,
    scale: float = 1.0,
) -> bytes:
    """The canvas as one JPEG at `quality`, without a byte budget (a few hundred KB)."""
    image = render_canvas(shapes, width=width, height=height, seed=seed, scale=scale)
    return _jpeg(image, quality)


def _jpeg(image: Image.Image, quality: int) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()
