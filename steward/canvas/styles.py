"""tldraw's style enums and the model-facing names (colours, fills, geo kinds, sizes)."""

from __future__ import annotations

from typing import Final, Literal, get_args

Color = Literal[
    "black",
    "grey",
    "light-violet",
    "violet",
    "blue",
    "light-blue",
    "yellow",
    "orange",
    "green",
    "light-green",
    "light-red",
    "red",
    "white",
]
COLORS: Final[tuple[str, ...]] = get_args(Color)
# What models write instead of tldraw's names.
COLOR_ALIASES: Final = {
    "gray": "grey",
    "light-gray": "grey",
    "light-grey": "grey",
    "silver": "grey",
    "dark-grey": "black",
    "dark-gray": "black",
    "purple": "violet",
    "lavender": "light-violet",
    "light-purple": "light-violet",
    "magenta": "violet",
    "pink": "light-red",
    "salmon": "light-red",
    "crimson": "red",
    "maroon": "red",
    "navy": "blue",
    "dark-blue": "blue",
    "cyan": "light-blue",
    "teal": "light-blue",
    "sky": "light-blue",
    "sky-blue": "light-blue",
    "turquoise": "light-blue",
    "aqua": "light-blue",
    "lime": "light-green",
    "mint": "light-green",
    "dark-green": "green",
    "olive": "green",
    "gold": "yellow",
    "amber": "orange",
    "brown": "orange",
    "beige": "yellow",
}

# The model's fill names → tldraw's `fill`.
FILLS: Final = {
    "none": "none",
    "tint": "semi",
    "background": "semi",
    "semi": "semi",
    "solid": "solid",
    "pattern": "pattern",
    "fill": "fill",
    "lined-fill": "lined-fill",
}
FILL_TO_MODEL: Final = {
    "none": "none",
    "semi": "tint",
    "solid": "solid",
    "pattern": "pattern",
    "fill": "solid",
    "lined-fill": "pattern",
}
MODEL_FILLS: Final = ("none", "tint", "background", "solid", "pattern")

# Model `_type` for geo shapes → tldraw `geo`.
GEO_KINDS: Final = {
    "rectangle": "rectangle",
    "ellipse": "ellipse",
    "triangle": "triangle",
    "diamond": "diamond",
    "hexagon": "hexagon",
    "pill": "oval",
    "cloud": "cloud",
    "x-box": "x-box",
    "check-box": "check-box",
    "heart": "heart",
    "pentagon": "pentagon",
    "octagon": "octagon",
    "star": "star",
    "parallelogram-right": "rhombus",
    "parallelogram-left": "rhombus-2",
    "trapezoid": "trapezoid",
    "fat-arrow-right": "arrow-right",
    "fat-arrow-left": "arrow-left",
    "fat-arrow-up": "arrow-up",
    "fat-arrow-down": "arrow-down",
}
GEO_TO_MODEL: Final = {v: k for k, v in GEO_KINDS.items()}
GEO_ALIASES: Final = {
    "rect": "rectangle",
    "box": "rectangle",
    "square": "rectangle",
    "circle": "ellipse",
    "oval": "pill",
    "rounded-rectangle": "pill",
    "rhombus": "diamond",
    "parallelogram": "parallelogram-right",
    "arrow-right": "fat-arrow-right",
    "arrow-left": "fat-arrow-left",
    "arrow-up": "fat-arrow-up",
    "arrow-down": "fat-arrow-down",
    "checkbox": "check-box",
    "xbox": "x-box",
    "sticky": "note",
    "sticky-note": "note",
    "label": "text",
    "connector": "arrow",
    "freehand": "draw",
}
OTHER_KINDS: Final = ("text", "note", "arrow", "line", "draw", "unknown")
SHAPE_KINDS: Final = (*GEO_KINDS, *OTHER_KINDS)

FONT_SIZE_BY_SIZE: Final = {"s": 18.0, "m": 24.0, "l": 36.0, "xl": 44.0}
TEXT_ALIGNS: Final = ("start", "middle", "end")
TEXT_ALIGN_ALIASES: Final = {
    "left": "start",
    "center": "middle",
    "centre": "middle",
    "right": "end",
}


def size_for_font(font_size: float) -> tuple[str, float]:
    """tldraw `size` and `scale` giving a font size in page pixels."""
    name = min(FONT_SIZE_BY_SIZE, key=lambda k: abs(FONT_SIZE_BY_SIZE[k] - font_size))
    base = FONT_SIZE_BY_SIZE[name]
    scale = font_size / base
    return name, (1.0 if abs(scale - 1.0) < 0.05 else round(scale, 3))
