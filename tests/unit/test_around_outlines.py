"""The image around a task shows the task areas its caption names: each outlined with grey
dashes and tagged with its id ("your task" for the fairy's own), drawn where the area lies in
the image; a picture that cannot be decoded goes on unchanged."""

from __future__ import annotations

import io

from PIL import Image

from steward.fairies.outlines import INK, outlined
from steward.ports import Picture
from steward.protocol.box import Box

# 1000 x 500 canvas units at 512 x 256 px: 0.512 px per unit.
BOUNDS = Box(x=-100, y=-100, w=1000, h=500)
OWN = Box(440, 0, 400, 300)
LEFT = Box(0, 0, 400, 300)
FAR = Box(5000, 5000, 100, 100)


def _picture(fmt: str = "PNG", media: str = "image/png") -> Picture:
    out = io.BytesIO()
    Image.new("RGB", (512, 256), (255, 255, 255)).save(out, format=fmt)
    return Picture(BOUNDS, out.getvalue(), media)


def _px(x: float, y: float) -> tuple[float, float]:
    return (x - BOUNDS.x) * 0.512, (y - BOUNDS.y) * 0.512


def _dark_near(image: Image.Image, at: tuple[float, float], reach: int = 3) -> bool:
    x0, y0 = at
    for dx in range(-reach, reach + 1):
        for dy in range(-reach, reach + 1):
            x, y = int(x0) + dx, int(y0) + dy
            if 0 <= x < image.width and 0 <= y < image.height:
                r, g, b = image.getpixel((x, y))  # type: ignore[misc]
                if max(r, g, b) < 120:
                    return True
    return False


def test_each_area_in_the_image_is_outlined_and_tagged_where_it_lies() -> None:
    pic = outlined(_picture(), OWN, [("left", LEFT), ("far", FAR)])
    assert pic.media_type == "image/png" and pic.bounds == BOUNDS
    image = Image.open(io.BytesIO(pic.data)).convert("RGB")
    assert image.size == (512, 256)
    # The dashes run along each area's edges (a dash or its neighbour within 3 px)...
    for r in (LEFT, OWN):
        edges = [(r.mid_x, r.max_y), (r.x, r.mid_y + 20), (r.max_x, r.mid_y + 20)]
        assert all(_dark_near(image, _px(*p)) for p in edges), r
    # ... the middles stay as they were (what the drawings show)...
    assert image.getpixel(tuple(int(v) for v in _px(LEFT.mid_x, LEFT.mid_y + 30))) == (
        255,
        255,
        255,
    )
    # ... and each tag sits just inside its area's top-left corner, in the ink's colour.
    for r in (LEFT, OWN):
        x, y = _px(r.x, r.y)
        tag = image.crop((int(x) + 2, int(y) + 2, int(x) + 40, int(y) + 16))
        assert INK in {c for _, c in tag.getcolors(4096) or []}, r


def test_a_webp_stays_a_webp_and_an_undecodable_picture_goes_on_as_it_came() -> None:
    webp = outlined(_picture("WEBP", "image/webp"), OWN, [("left", LEFT)])
    assert webp.media_type == "image/webp"
    assert Image.open(io.BytesIO(webp.data)).format == "WEBP"
    broken = Picture(BOUNDS, b"not an image", "image/webp")
    assert outlined(broken, OWN, [("left", LEFT)]) is broken
