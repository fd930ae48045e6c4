"""Simple pictures the scripted model can draw from geo shapes: a cat, a house, a tree...

Each picture is drawn in its own frame; any two of its parts either do not overlap or one
holds the other (an eye inside a head), so a picture never counts as an unintended overlap.
`scene_for` turns a subject ("a farm") into the pictures that belong to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (geo kind, x, y, w, h, colour, fill) in the picture's frame.
Part = tuple[str, float, float, float, float, str, str]


@dataclass(frozen=True)
class Picture:
    """A picture the scripted model can draw: its frame's size and the geo shapes it is made of."""

    name: str
    w: float
    h: float
    parts: tuple[Part, ...]


# Each picture: its frame's size, then one part a line: geo kind, x, y, w, h, colour, fill.
_SPECS = {
    "cat": (
        "100 110",
        "triangle 22 0 18 16 orange solid",
        "triangle 60 0 18 16 orange solid",
        "ellipse 20 16 60 44 orange tint",
        "ellipse 32 28 10 10 black solid",
        "ellipse 58 28 10 10 black solid",
        "triangle 46 44 8 6 red solid",
        "ellipse 25 60 50 50 orange tint",
        "rectangle 75 88 24 6 orange solid",
    ),
    "dog": (
        "108 110",
        "ellipse 4 16 16 30 orange solid",
        "ellipse 88 16 16 30 orange solid",
        "ellipse 20 10 68 50 orange tint",
        "ellipse 36 24 10 10 black solid",
        "ellipse 62 24 10 10 black solid",
        "ellipse 48 40 12 9 black solid",
        "rectangle 24 60 60 36 orange tint",
        "rectangle 28 96 10 14 orange solid",
        "rectangle 70 96 10 14 orange solid",
    ),
    "house": (
        "120 110",
        "triangle 0 0 120 45 red solid",
        "rectangle 10 45 100 65 orange tint",
        "rectangle 50 75 20 35 orange solid",
        "rectangle 20 55 20 18 light-blue solid",
        "rectangle 80 55 20 18 light-blue solid",
    ),
    "barn": (
        "120 110",
        "triangle 0 0 120 40 red solid",
        "rectangle 8 40 104 70 red tint",
        "rectangle 40 62 40 48 red solid",
        "rectangle 50 47 20 12 white solid",
    ),
    "tree": (
        "100 120",
        "ellipse 10 0 80 72 green solid",
        "rectangle 42 72 16 48 orange solid",
    ),
    "sun": (
        "100 100",
        "ellipse 0 0 100 100 yellow solid",
        "ellipse 30 30 40 40 orange tint",
    ),
    "flower": (
        "80 110",
        "ellipse 15 0 50 50 violet solid",
        "ellipse 30 15 20 20 yellow solid",
        "rectangle 37 50 6 60 green solid",
        "ellipse 43 70 24 12 green solid",
    ),
    "car": (
        "130 80",
        "rectangle 28 0 64 22 red tint",
        "rectangle 33 4 24 14 light-blue solid",
        "rectangle 63 4 24 14 light-blue solid",
        "rectangle 0 22 130 34 red solid",
        "ellipse 16 56 24 24 black solid",
        "ellipse 90 56 24 24 black solid",
    ),
    "boat": (
        "120 80",
        "rectangle 56 0 6 50 black solid",
        "triangle 64 6 44 40 grey tint",
        "trapezoid 0 50 120 30 orange solid",
    ),
    "fish": (
        "110 56",
        "ellipse 0 0 80 56 light-blue solid",
        "ellipse 56 18 9 9 black solid",
        "triangle 80 12 30 32 blue solid",
    ),
    "bird": (
        "80 50",
        "ellipse 0 0 62 44 blue tint",
        "ellipse 42 10 8 8 black solid",
        "triangle 62 14 18 12 orange solid",
    ),
    "person": (
        "100 110",
        "ellipse 35 0 30 30 black none",
        "rectangle 40 30 20 45 blue solid",
        "rectangle 14 34 26 7 black solid",
        "rectangle 60 34 26 7 black solid",
        "rectangle 40 75 8 35 black solid",
        "rectangle 52 75 8 35 black solid",
    ),
    "smiley": (
        "100 100",
        "ellipse 0 0 100 100 yellow solid",
        "ellipse 28 28 12 12 black solid",
        "ellipse 60 28 12 12 black solid",
        "ellipse 30 60 40 16 black solid",
    ),
    "rocket": (
        "100 110",
        "triangle 35 0 30 20 red solid",
        "rectangle 35 20 30 70 grey tint",
        "ellipse 42 34 16 16 light-blue solid",
        "triangle 15 70 20 20 red solid",
        "triangle 65 70 20 20 red solid",
        "triangle 40 90 20 20 orange solid",
    ),
    "robot": (
        "100 110",
        "rectangle 30 0 40 30 grey tint",
        "ellipse 37 8 9 9 blue solid",
        "ellipse 54 8 9 9 blue solid",
        "rectangle 20 30 60 50 grey solid",
        "rectangle 4 36 16 8 grey solid",
        "rectangle 80 36 16 8 grey solid",
        "rectangle 30 80 12 30 grey solid",
        "rectangle 58 80 12 30 grey solid",
    ),
    "mountain": (
        "160 100",
        "triangle 0 0 100 100 grey solid",
        "triangle 100 30 60 70 grey tint",
    ),
    "snowman": (
        "80 110",
        "ellipse 20 0 40 40 grey none",
        "ellipse 30 12 6 6 black solid",
        "ellipse 44 12 6 6 black solid",
        "ellipse 10 40 60 70 grey none",
    ),
    "field": (
        "160 70",
        "rectangle 0 0 160 70 light-green solid",
        "rectangle 10 12 140 6 green solid",
        "rectangle 10 32 140 6 green solid",
        "rectangle 10 52 140 6 green solid",
    ),
    "planet": (
        "100 100",
        "ellipse 0 0 100 100 violet solid",
        "ellipse 20 40 60 20 light-violet solid",
    ),
    "cup": (
        "90 80",
        "rectangle 0 0 70 80 blue tint",
        "ellipse 70 20 20 30 blue none",
    ),
}


def _parse(name: str, spec: tuple[str, ...]) -> Picture:
    w, h = (float(v) for v in spec[0].split())
    parts: list[Part] = []
    for line in spec[1:]:
        kind, x, y, pw, ph, color, fill = line.split()
        parts.append((kind, float(x), float(y), float(pw), float(ph), color, fill))
    return Picture(name, w, h, tuple(parts))


PICTURES: dict[str, Picture] = {name: _parse(name, spec) for name, spec in _SPECS.items()}
# Other words for the same picture.
ALIASES = {
    "kitten": "cat",
    "kitty": "cat",
    "puppy": "dog",
    "home": "house",
    "cottage": "house",
    "building": "house",
    "shed": "barn",
    "farmhouse": "barn",
    "oak": "tree",
    "pine": "tree",
    "forest": "tree",
    "orchard": "tree",
    "rose": "flower",
    "tulip": "flower",
    "daisy": "flower",
    "ship": "boat",
    "sailboat": "boat",
    "truck": "car",
    "vehicle": "car",
    "man": "person",
    "woman": "person",
    "people": "person",
    "stick": "person",
    "figure": "person",
    "face": "smiley",
    "smile": "smiley",
    "emoji": "smiley",
    "spaceship": "rocket",
    "hill": "mountain",
    "hills": "mountain",
    "crops": "field",
    "meadow": "field",
    "grass": "field",
    "moon": "planet",
    "earth": "planet",
    "mug": "cup",
    "coffee": "cup",
}
SCENES: dict[str, tuple[str, ...]] = {
    "farm": ("barn", "tree", "field"),
    "village": ("house", "tree", "house"),
    "town": ("house", "house", "tree"),
    "city": ("house", "car", "house"),
    "street": ("house", "car", "tree"),
    "beach": ("sun", "boat", "fish"),
    "sea": ("boat", "fish", "fish"),
    "ocean": ("boat", "fish", "fish"),
    "garden": ("flower", "tree", "flower"),
    "park": ("tree", "person", "tree"),
    "space": ("rocket", "planet", "sun"),
    "landscape": ("mountain", "tree", "sun"),
    "winter": ("snowman", "tree", "house"),
    "zoo": ("cat", "bird", "dog"),
    "pets": ("cat", "dog", "fish"),
    "family": ("person", "person", "house"),
    "countryside": ("field", "tree", "barn"),
    "sky": ("sun", "bird", "planet"),
}


def picture_for(text: str) -> Picture | None:
    """The picture a phrase names ("a small cat" → cat), if any."""
    for word in re.findall(r"[a-z]+", text.lower()):
        name = word if word in PICTURES else ALIASES.get(word) or ALIASES.get(word.rstrip("s"))
        if name is None and word.endswith("s") and word[:-1] in PICTURES:
            name = word[:-1]
        if name:
            return PICTURES[name]
    return None


def scene_for(text: str) -> tuple[str, list[Picture]] | None:
    """A scene's name and its pictures ("a farm" → barn, tree, field), if the phrase names one."""
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in SCENES:
            return word, [PICTURES[n] for n in SCENES[word]]
    return None


def known_subjects() -> list[str]:
    return sorted(PICTURES) + sorted(SCENES)


def layout(picture: Picture, x: float, y: float, w: float, h: float) -> list[Part]:
    """The picture's parts fitted (aspect kept, centred) into the box x, y, w, h. Each edge
    is rounded once, so parts that touch or nest in the frame still touch or nest."""
    s = min(w / picture.w, h / picture.h)
    ox = x + (w - picture.w * s) / 2
    oy = y + (h - picture.h * s) / 2
    out: list[Part] = []
    for kind, px, py, pw, ph, color, fill in picture.parts:
        x0, y0 = round(ox + px * s), round(oy + py * s)
        x1, y1 = round(ox + (px + pw) * s), round(oy + (py + ph) * s)
        out.append((kind, x0, y0, max(x1 - x0, 2), max(y1 - y0, 2), color, fill))
    return out
