"""tldraw's style enums and the model-facing names (colours, fills, geo kinds, sizes)."""

from __future__ import annotations

from typing import Final, Literal, get_args

from steward.protocol.messages import FairyColor

# tldraw's named colours: the fairies' palette (the protocol's), and white, which no fairy wears.
Color = Literal[FairyColor, "white"]
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

# The model's fills and how each maps to tldraw's `fill`, as tldraw's agent kit teaches them:
# tldraw's own `solid` is a pale tint of the colour, its `lined-fill` the saturated colour.
# The one home of the mapping: shapes the model writes go through `fill_to_tldraw`, shapes
# the model is shown through `fill_to_model` (browsers apply the tldraw records as sent).
MODEL_FILLS: Final = ("none", "tint", "background", "solid", "pattern")
_TO_TLDRAW: Final = {
    "none": "none",
    "solid": "lined-fill",
    "background": "semi",
    "tint": "solid",
    "pattern": "pattern",
}
_TO_MODEL: Final = {
    "none": "none",
    "fill": "solid",
    "lined-fill": "solid",
    "semi": "background",
    "solid": "tint",
    "pattern": "pattern",
}
# What models write instead of the model names (tldraw's own names included).
FILL_ALIASES: Final = {
    "semi": "background",
    "fill": "solid",
    "lined-fill": "solid",
    "filled": "solid",
    "full": "solid",
    "transparent": "none",
    "empty": "none",
    "light": "tint",
    "pastel": "tint",
    "hatch": "pattern",
    "hatched": "pattern",
    "striped": "pattern",
}
# How each fill and colour looks, for the system prompt.
FILL_LOOKS: Final = {
    "none": "only the outline; the canvas shows through",
    "tint": "a pale, pastel wash of the colour (a red tint looks pink)",
    "background": "the canvas's own colour (white, or black in dark mode), hiding what lies behind",
    "solid": "the full, saturated colour (a solid red shape is red)",
    "pattern": "diagonal hatching in the colour over the canvas colour",
}
COLOR_LOOKS: Final = {
    "black": "black (white in dark mode)",
    "grey": "mid grey",
    "light-violet": "lilac, a pale purple",
    "violet": "purple",
    "blue": "strong blue",
    "light-blue": "sky blue",
    "yellow": "amber, a warm orange-yellow (no lemon yellow: filled, it reads light orange)",
    "orange": "orange (use it for browns and wood)",
    "green": "grass green",
    "light-green": "pale lime green",
    "light-red": "pink",
    "red": "red",
    "white": "white (invisible on a white canvas without a grey outline)",
}


def model_fill(value: object) -> str | None:
    """The model fill a written value means (a model name or an alias), or None."""
    if not isinstance(value, str):
        return None
    v = value.strip().lower().replace("_", "-").replace(" ", "-")
    if v in _TO_TLDRAW:
        return v
    return FILL_ALIASES.get(v) or FILL_ALIASES.get(v.replace("-", ""))


def fill_to_tldraw(value: object, default: str = "none") -> str:
    """tldraw's `fill` for a fill the model wrote (`default` when it names none)."""
    fill = model_fill(value)
    return _TO_TLDRAW[fill] if fill is not None else default


def fill_to_model(value: object) -> str:
    """The model's name for a tldraw `fill` (shapes shown to the model)."""
    return _TO_MODEL.get(value, "none") if isinstance(value, str) else "none"


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
    "freehand": "pen",
    "draw": "pen",  # tldraw's name for a freehand stroke; the model's is `pen`'s
}
OTHER_KINDS: Final = ("text", "note", "arrow", "line", "pen", "unknown")
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
