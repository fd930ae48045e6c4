"""Reading a request the way the scripted model needs it: what to do, to what, with which words.

Pure text work, no canvas: `read(message)` returns a `Reading` with the verb family, the
things named ("the arrows", "the chart"), quoted text, listed items, a count, a colour and a
direction. The scripted model decides what to draw from it and from the canvas it is shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from steward.canvas.styles import COLOR_ALIASES, COLORS

Intent = Literal[
    "empty",
    "question",
    "clear",
    "delete",
    "recolor",
    "move",
    "resize",
    "align",
    "distribute",
    "stack",
    "label",
    "connect",
    "flowchart",
    "notes",
    "text",
    "shape",
    "picture",
    "unknown",
]

# What people call each kind of thing on the canvas → the model `_type`s it covers.
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "arrow": ("arrow",),
    "arrows": ("arrow",),
    "connector": ("arrow",),
    "connectors": ("arrow",),
    "line": ("arrow", "line"),
    "lines": ("arrow", "line"),
    "note": ("note",),
    "notes": ("note",),
    "sticky": ("note",),
    "stickies": ("note",),
    "text": ("text",),
    "texts": ("text",),
    "title": ("text",),
    "heading": ("text",),
    "circle": ("ellipse",),
    "circles": ("ellipse",),
    "ellipse": ("ellipse",),
    "ellipses": ("ellipse",),
    "oval": ("ellipse", "pill"),
    "rectangle": ("rectangle",),
    "rectangles": ("rectangle",),
    "box": ("rectangle",),
    "boxes": ("rectangle",),
    "square": ("rectangle",),
    "squares": ("rectangle",),
    "triangle": ("triangle",),
    "triangles": ("triangle",),
    "star": ("star",),
    "stars": ("star",),
    "diamond": ("diamond",),
    "diamonds": ("diamond",),
    "cloud": ("cloud",),
    "clouds": ("cloud",),
    "heart": ("heart",),
    "hearts": ("heart",),
    "hexagon": ("hexagon",),
    "hexagons": ("hexagon",),
    "drawing": ("pen",),
    "sketch": ("pen",),
    "doodle": ("pen",),
    "scribble": ("pen",),
}
# The geo kind to draw for a shape word.
GEO_WORDS: dict[str, str] = {
    "circle": "ellipse",
    "ellipse": "ellipse",
    "oval": "ellipse",
    "rectangle": "rectangle",
    "box": "rectangle",
    "square": "rectangle",
    "triangle": "triangle",
    "star": "star",
    "diamond": "diamond",
    "cloud": "cloud",
    "heart": "heart",
    "hexagon": "hexagon",
}
# Words that name a whole drawing of several shapes (matched against shape notes).
GROUP_WORDS = ("chart", "flowchart", "flow", "diagram", "drawing", "picture", "sketch")
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "couple": 2,
    "few": 3,
    "several": 3,
}
MAX_COUNT = 12
DIRECTIONS = {
    "left": (-1, 0),
    "right": (1, 0),
    "up": (0, -1),
    "down": (0, 1),
    "higher": (0, -1),
    "lower": (0, 1),
    "above": (0, -1),
    "below": (0, 1),
    "under": (0, 1),
}
_CLEAR_ALL = re.compile(
    r"\b(?:clear|wipe|erase|reset|empty)\s+(?:the\s+|this\s+|my\s+|our\s+)?(?:whole\s+|entire\s+)?"
    r"(?:canvas|board|page|whiteboard|screen|everything|all)\b"
    r"|\b(?:delete|remove|erase)\s+(?:everything|all(?:\s+(?:the\s+)?shapes)?)\s*$"
    r"|\bstart\s+(?:over|again|from\s+scratch)\b|\bclean\s+slate\b"
)
_DESTROY = re.compile(r"\b(?:clear|erase|delete|remove|wipe|get rid of|rub out|scrap|trash)\b")
_QUESTION_START = re.compile(
    r"^(?:what|what's|whats|who|whom|whose|when|where|why|how|which|is|are|am|was|were|"
    r"does|did|do|will|shall|should|may)\b"
)
_POLITE_ASK = re.compile(r"^(?:can|could|would|will)\s+you\b|^please\b")
_IMPERATIVE = re.compile(
    r"\b(?:draw|add|create|make|put|place|write|sketch|move|delete|erase|remove|clear|"
    r"connect|link|align|stack|distribute|label|rename|colou?r|paint|turn|resize|show)\b"
)
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’|(?:^|\s)'([^']+)'(?=[\s.,!?;:]|$)")
# "… saying X", "… that says X", "… called X", "… labelled X", "… about X": the user's words.
_WORDS_AFTER = re.compile(
    r"\b(?:saying|says|that\s+says|reading|reads|with\s+the\s+text|with\s+text|called|named|"
    r"labell?ed|titled|about|for|listing|:)\s+(.+)$"
)
# Where a thing goes is not part of what it says.
_PLACE_TAIL = re.compile(
    r"\s+(?:next to|beside|near|to the (?:right|left) of|right of|left of|above|below|under|"
    r"underneath|on the (?:left|right|top|bottom)|in (?:red|blue|green|yellow|orange|violet|"
    r"black|grey|purple|pink)\b)"
)
_LIST_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\bor\b|&|\+|/)\s*")
_STOP = frozenset(
    "a an the some my our your his her its their this that these those of to in on at by "
    "with for and or please me us it them".split()
)


@dataclass
class Reading:
    """What a request asks for, in the user's words."""

    text: str
    low: str
    intent: Intent
    quoted: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # the user's words for each new thing
    kinds: list[str] = field(default_factory=list)  # model _types named ("arrow", "note")
    plural: bool = False  # "the notes" rather than "the note"
    count: int | None = None
    color: str | None = None
    direction: tuple[int, int] | None = None
    geo: str | None = None  # the shape to draw
    subject: str = ""  # what a picture or chart is of
    anchor: str | None = None  # "next to the chart": the word naming what to sit beside
    side: str | None = None  # right, left, above, below (of the anchor)
    pronoun: bool = False  # "it", "this", "them", "the selection"
    this: bool = False  # "this", "these", "the selection": what the asker selected, only
    group_word: str | None = None  # "the chart", "the drawing"


def _color(low: str) -> str | None:
    light = re.search(r"\blight[- ](blue|green|red|violet|purple)\b", low)
    if light:
        return "light-violet" if light.group(1) == "purple" else f"light-{light.group(1)}"
    for word in map(str, re.findall(r"[a-z]+", low)):
        if word in COLORS:
            return word
        if word in COLOR_ALIASES:
            return str(COLOR_ALIASES[word])
    return None


def _geo(word: str) -> str | None:
    for stem in (word, word[:-1], word[:-2]):  # circle, circles, boxes
        if stem in GEO_WORDS:
            return GEO_WORDS[stem]
    return None


def _quoted(text: str) -> list[str]:
    out = []
    for m in _QUOTED.finditer(text):
        q = next(g for g in m.groups() if g is not None).strip()
        if q:
            out.append(q)
    return out


def _count(low: str) -> int | None:
    m = re.search(r"\b(\d{1,2})\b", low)
    if m:
        return max(1, min(int(m.group(1)), MAX_COUNT))
    for word in re.findall(r"[a-z]+", low):
        if word in NUMBERS and word not in ("a", "an"):
            return NUMBERS[word]
    return None


def split_items(phrase: str, count: int | None = None) -> list[str]:
    """ "goals, plans and risks" → three items; "goals plans risks" too when three were asked."""
    phrase = re.sub(r"[.!?]+$", "", phrase.strip())
    parts = [p.strip(" .!?") for p in _LIST_SPLIT.split(phrase) if p.strip(" .!?")]
    if len(parts) == 1 and count and count > 1:
        words = [w for w in parts[0].split() if w not in _STOP]
        if len(words) == count:
            parts = words
    return [p for p in parts if p][:MAX_COUNT]


def _kinds(low: str) -> tuple[list[str], bool]:
    kinds: list[str] = []
    plural = False
    for word in re.findall(r"[a-z]+", low):
        if word in KIND_WORDS:
            for k in KIND_WORDS[word]:
                if k not in kinds:
                    kinds.append(k)
            plural = plural or (word.endswith("s") and word not in ("text",)) or word == "stickies"
    if re.search(r"\b(?:all|every|each)\b", low):
        plural = True
    return kinds, plural


def _is_question(low: str) -> bool:
    if _POLITE_ASK.search(low) and _IMPERATIVE.search(low):
        return False
    if low.endswith("?"):
        return True
    return bool(_QUESTION_START.search(low)) and not _IMPERATIVE.search(low)


def _anchor(low: str) -> tuple[str | None, str | None]:
    m = re.search(
        r"\b(next to|beside|by|near|right of|to the right of|left of|to the left of|"
        r"above|over|on top of|below|under|underneath|beneath)\s+(?:the\s+|my\s+|our\s+)?"
        r"([a-z][a-z-]*)",
        low,
    )
    if not m:
        return None, None
    where, what = m.group(1), m.group(2)
    side = (
        "left"
        if "left" in where
        else "above"
        if where in ("above", "over", "on top of")
        else "below"
        if where in ("below", "under", "underneath", "beneath")
        else "right"
    )
    return what, side


def _subject(low: str) -> str:
    m = re.search(
        r"\b(?:draw|sketch|paint|make|create|add|show)\s+(?:me\s+|us\s+)?"
        r"(?:a|an|the|some|one|two|three|four|five|\d+)?\s*(?:picture\s+of\s+(?:a|an|the)?\s*)?"
        r"([a-z][a-z -]*)",
        low,
    )
    text = m.group(1) if m else low
    text = re.split(r"\b(?:next to|beside|near|below|above|under|in|on|at|with|for)\b", text)[0]
    return text.strip(" -.!?")


def read(message: str) -> Reading:
    text = " ".join(message.split())
    low = text.lower().strip()
    quoted = _quoted(text)
    # Quoted words are the user's content: keep them out of the verb and kind reading.
    bare = _QUOTED.sub(" ", low).strip()
    kinds, plural = _kinds(bare)
    count = _count(bare)
    r = Reading(
        text=text,
        low=low,
        intent="unknown",
        quoted=quoted,
        kinds=kinds,
        plural=plural,
        count=count,
        color=_color(bare),
    )
    r.anchor, r.side = _anchor(bare)
    r.pronoun = bool(re.search(r"\b(?:it|this|that|them|these|those|selection|selected)\b", bare))
    r.this = bool(re.search(r"\b(?:this|these|selection|selected)\b", bare))
    r.group_word = next((w for w in GROUP_WORDS if re.search(rf"\b{w}s?\b", bare)), None)
    words = set(re.findall(r"[a-z]+", bare))
    r.direction = next((d for w, d in DIRECTIONS.items() if w in words), None)
    r.geo = next((g for g in map(_geo, re.findall(r"[a-z]+", bare)) if g), None)
    if not low:
        r.intent = "empty"
        return r
    if _is_question(low) and not _DESTROY.search(bare):
        r.intent = "question"
        return r
    if _CLEAR_ALL.search(bare):
        r.intent = "clear"
        return r
    if _DESTROY.search(bare):
        r.intent = "delete"
        return r
    r.intent = _build_intent(r, bare, words)
    if r.intent in ("notes", "text", "shape", "label"):
        r.items = quoted or _items_after(bare, text, count)
    if r.intent in ("picture", "flowchart"):
        r.subject = _subject(bare)
        r.items = quoted or _flow_items(bare, text)
    return r


def _build_intent(r: Reading, bare: str, words: set[str]) -> Intent:
    if re.search(r"\b(?:connect|link|join)\b", bare) or (
        re.search(r"\barrows?\b", bare) and re.search(r"\bfrom\b.+\bto\b", bare)
    ):
        return "connect"
    if re.search(r"\b(?:align|line (?:them|it|these|those|the \w+) up)\b", bare):
        return "align"
    if re.search(r"\b(?:distribute|space (?:them|it|\w+) out|space out|even(?:ly)? space)", bare):
        return "distribute"
    if re.search(r"\bstack\b", bare):
        return "stack"
    if re.search(r"\b(?:move|shift|drag|push|nudge)\b", bare):
        return "move"
    if re.search(r"\b(?:bigger|larger|smaller|tinier|grow|shrink|enlarge|resize)\b", bare):
        return "resize"
    if (
        r.color
        and re.search(r"\b(?:make|turn|colou?r|paint|change|set|recolou?r)\b", bare)
        and (
            r.pronoun or r.kinds or r.group_word or not re.search(r"\b(?:draw|add|create)\b", bare)
        )
    ):
        return "recolor"
    if re.search(r"\b(?:label|rename|retitle|caption)\b", bare) and (r.pronoun or r.quoted):
        return "label"
    if re.search(
        r"\bflow ?charts?\b|\bdiagram\b|\bprocess\b|\bflow\b|\bsteps\b|\bpipeline\b", bare
    ):
        return "flowchart"
    if r.kinds and r.kinds[0] == "note":
        return "notes"
    if re.search(r"\b(?:write|type|title|heading|caption)\b", bare) or r.kinds[:1] == ["text"]:
        return "text"
    if r.geo:
        return "shape"
    if re.search(r"\b(?:draw|sketch|paint|doodle|picture|illustrate)\b", bare):
        return "picture"
    if re.search(r"\b(?:add|create|make|put|show)\s+(?:me\s+)?(?:a|an|some|the)?\s*\w+", bare):
        return "picture"
    return "unknown"


def _items_after(bare: str, text: str, count: int | None) -> list[str]:
    m = _WORDS_AFTER.search(bare)
    if not m:
        return []
    phrase = _PLACE_TAIL.split(m.group(1))[0]
    # The user's own casing, from the original text at the same place.
    offset = text.lower().rfind(phrase)
    original = text[offset : offset + len(phrase)] if offset >= 0 else phrase
    return split_items(original, count)


def _flow_items(bare: str, text: str) -> list[str]:
    """ "a flow chart of our signup: sign up, verify email, welcome" → the listed steps."""
    if ":" not in text:
        return []
    tail = text.split(":", 1)[1]
    items = split_items(tail)
    return items if len(items) >= 2 else []


def words_of(text: str) -> list[str]:
    """Content words, for matching a request against shape texts."""
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1]
