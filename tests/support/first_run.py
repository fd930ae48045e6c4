"""The sentences a new user types on a first run, and what the default model must do with each.

One table, used by the unit test (in-memory session), the integration test (a real room) and
checked against docs/FIRST-RUN.md. Each case runs its `before` sentences first, then the
sentence, and `check` compares the canvas before and after it: which shapes were added,
removed or changed, with which kinds, texts and colours, and that nothing else changed.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.bounds import shape_bounds
from steward.canvas.simple import model_type
from steward.protocol.box import union

Shapes = dict[str, dict[str, Any]]
FLOW = "draw a flow chart of our signup"
NOTES = "add three sticky notes about goals, plans, risks"
BOXES = "add two boxes labelled 'API' and 'DB'"
CIRCLE = "draw a red circle"


@dataclass
class Change:
    """A canvas difference: added and removed records, and (before, after) of changed ones."""

    added: list[dict[str, Any]]
    removed: list[dict[str, Any]]
    changed: list[tuple[dict[str, Any], dict[str, Any]]]

    def kinds(self, which: str) -> Counter[str]:
        items = self.added if which == "added" else self.removed
        return Counter(model_type(s) for s in items)

    def texts(self) -> list[str]:
        return sorted(str((s.get("props") or {}).get("text") or "") for s in self.added)


def diff(before: Shapes, after: Shapes) -> Change:
    return Change(
        added=[s for i, s in after.items() if i not in before],
        removed=[s for i, s in before.items() if i not in after],
        changed=[(before[i], s) for i, s in after.items() if i in before and before[i] != s],
    )


def nothing(c: Change) -> None:
    assert not c.added and not c.removed and not c.changed, c


def _added(kinds: dict[str, int], texts: list[str] | None = None) -> Callable[[Change], None]:
    def check(c: Change) -> None:
        assert c.kinds("added") == Counter(kinds), c.kinds("added")
        assert not c.removed and not c.changed
        if texts is not None:
            assert c.texts() == sorted(texts), c.texts()

    return check


def _removed(kinds: dict[str, int]) -> Callable[[Change], None]:
    def check(c: Change) -> None:
        assert c.kinds("removed") == Counter(kinds), c.kinds("removed")
        assert not c.added and not c.changed

    return check


def _props(c: Change, key: str) -> list[tuple[Any, Any]]:
    return [
        ((a.get("props") or {}).get(key), (b.get("props") or {}).get(key)) for a, b in c.changed
    ]


def _recolored(kind: str, n: int, color: str) -> Callable[[Change], None]:
    def check(c: Change) -> None:
        assert not c.added and not c.removed
        assert [model_type(b) for _, b in c.changed] == [kind] * n
        assert all(after == color for _, after in _props(c, "color"))

    return check


def _moved(kind: str, n: int, dx: int, dy: int) -> Callable[[Change], None]:
    def check(c: Change) -> None:
        assert not c.added and not c.removed and len(c.changed) == n
        for a, b in c.changed:
            assert model_type(b) == kind
            mx, my = b["x"] - a["x"], b["y"] - a["y"]
            assert (mx > 0) - (mx < 0) == dx and (my > 0) - (my < 0) == dy, (mx, my)
            assert a["props"] == b["props"]

    return check


def _grew(c: Change) -> None:
    assert not c.added and not c.removed and len(c.changed) == 1
    ((a, b),) = c.changed
    assert b["props"]["w"] > a["props"]["w"] and b["props"]["h"] > a["props"]["h"]


def _stacked(c: Change) -> None:
    assert not c.added and not c.removed and c.changed
    assert all(model_type(b) == "note" for _, b in c.changed)
    boxes = sorted((shape_bounds(b) for _, b in c.changed), key=lambda r: r.y)
    assert all(a.max_y <= b.y for a, b in itertools.pairwise(boxes)), boxes


def _labelled(text: str) -> Callable[[Change], None]:
    def check(c: Change) -> None:
        assert not c.added and not c.removed
        assert [after for _, after in _props(c, "text")] == [text]

    return check


def _connected(c: Change) -> None:
    assert c.kinds("added") == Counter({"arrow": 1}) and not c.removed and not c.changed
    (arrow,) = c.added
    assert arrow["bindings"]["start"] and arrow["bindings"]["end"]


def _note_beside_chart(before: Shapes, after: Shapes, c: Change) -> None:
    _added({"note": 1}, ["ask legal about GDPR"])(c)
    chart = union(shape_bounds(s) for s in before.values())
    note = shape_bounds(c.added[0])
    assert chart is not None and not chart.intersects(note)
    assert chart.expand(100).intersects(note), (note, chart)  # next to it, not far away


def _cleared(c: Change) -> None:
    assert c.removed and not c.added and not c.changed


@dataclass
class Case:
    sentence: str
    does: str  # the docs' words for what happens
    check: Callable[[Change], None] | None = None
    before: tuple[str, ...] = ()
    chat: str = ""  # a phrase the final chat message holds
    full: Callable[[Shapes, Shapes, Change], None] | None = None  # needs the canvases
    select: str | None = None  # the model type to select before the sentence
    extra: dict[str, Any] = field(default_factory=dict)

    def verify(self, before: Shapes, after: Shapes, chats: list[str]) -> None:
        c = diff(before, after)
        if self.full is not None:
            self.full(before, after, c)
        if self.check is not None:
            self.check(c)
        if self.chat:
            assert chats and self.chat.lower() in chats[-1].lower(), chats[-1:]


CASES: list[Case] = [
    Case(
        FLOW,
        "a 5-step flow chart (Landing page … Welcome) with 4 bound arrows, in the asker's viewport",
        _added({"ellipse": 2, "rectangle": 3, "arrow": 4}),
    ),
    Case(
        "Draw a flow chart of our signup: sign up, verify email, welcome.",
        "a flow chart of exactly the listed steps",
        _added(
            {"ellipse": 2, "rectangle": 1, "arrow": 2},
            ["", "", "Sign up", "Verify email", "Welcome"],
        ),
    ),
    Case(
        "draw a flow chart of the checkout",
        "the checkout steps, Cart … Receipt",
        _added({"ellipse": 2, "rectangle": 3, "arrow": 4}),
    ),
    Case(
        "draw a diagram",
        "a generic 5-step flow",
        _added({"ellipse": 2, "rectangle": 3, "arrow": 4}),
    ),
    Case(
        "add three sticky notes about goals plans risks",
        "three notes: goals, plans, risks",
        _added({"note": 3}, ["goals", "plans", "risks"]),
    ),
    Case(NOTES, "the same, from a comma list", _added({"note": 3}, ["goals", "plans", "risks"])),
    Case(
        'add a note next to the chart saying "ask legal about GDPR"',
        "one note with the quoted words, beside the chart",
        before=(FLOW,),
        full=_note_beside_chart,
    ),
    Case(
        "add a sticky note saying 'call the bank'",
        "one note: call the bank",
        _added({"note": 1}, ["call the bank"]),
    ),
    Case("add a yellow note: buy milk", "one note: buy milk", _added({"note": 1}, ["buy milk"])),
    Case("add a note", "one empty note to type into", _added({"note": 1}, [""])),
    Case(
        "write 'Q3 planning' as a title",
        "a text shape with the quoted words",
        _added({"text": 1}, ["Q3 planning"]),
    ),
    Case("draw a blue circle", "a blue ellipse", _added({"ellipse": 1})),
    Case("draw three red stars", "three red stars in a row", _added({"star": 3})),
    Case(
        "add a box labelled 'Payments API'",
        "a rectangle with that label",
        _added({"rectangle": 1}, ["Payments API"]),
    ),
    Case(BOXES, "two labelled rectangles", _added({"rectangle": 2}, ["API", "DB"])),
    Case("connect API to DB", "an arrow bound to both boxes", _connected, before=(BOXES,)),
    Case(
        "draw a cat",
        "a cat from 8 nested or touching shapes",
        _added({"triangle": 3, "ellipse": 4, "rectangle": 1}),
    ),
    Case(
        "can you draw a tree?",
        "a tree (a request, not a question)",
        _added({"ellipse": 1, "rectangle": 1}),
    ),
    Case(
        "draw a farm",
        "a barn, a tree and a field side by side",
        _added({"triangle": 1, "rectangle": 8, "ellipse": 1}),
    ),
    Case(
        "draw a dragon",
        "nothing; chat says it needs a real model and lists what it can draw",
        nothing,
        chat="without a real model",
    ),
    Case(
        "make it blue",
        "recolours the last drawing (or the selection)",
        _recolored("ellipse", 1, "blue"),
        before=(CIRCLE,),
    ),
    Case(
        "make this blue",
        "recolours the asker's selection",
        _recolored("note", 1, "blue"),
        before=(NOTES,),
        select="note",
    ),
    Case(
        "make this blue",
        "nothing selected: asks, changes nothing",
        nothing,
        before=(CIRCLE,),
        chat="select what you mean",
    ),
    Case(
        "make the notes green",
        "recolours every note",
        _recolored("note", 3, "green"),
        before=(NOTES,),
    ),
    Case(
        "move the notes left",
        "moves the notes left into free space",
        _moved("note", 3, -1, 0),
        before=(NOTES,),
    ),
    Case(
        "move it down", "moves the last drawing down", _moved("ellipse", 1, 0, 1), before=(CIRCLE,)
    ),
    Case("make the circle bigger", "scales it up", _grew, before=(CIRCLE,)),
    Case("stack the notes", "stacks the notes vertically", _stacked, before=(NOTES,)),
    Case(
        "label it 'Start here'",
        "labels the last drawing",
        _labelled("Start here"),
        before=(CIRCLE,),
    ),
    Case("erase the arrows", "deletes the arrows only", _removed({"arrow": 4}), before=(FLOW,)),
    Case(
        "erase the arrow",
        "several arrows: asks which one, changes nothing",
        nothing,
        before=(FLOW,),
        chat="which one",
    ),
    Case(
        "erase the arrow",
        "the only arrow: deletes it",
        _removed({"arrow": 1}),
        before=(BOXES, "connect API to DB"),
    ),
    Case(
        "delete the note saying plans",
        "deletes that note only",
        _removed({"note": 1}),
        before=(NOTES,),
    ),
    Case(
        "remove the verify email step",
        "deletes that step and the arrows bound to it",
        _removed({"rectangle": 1, "arrow": 2}),
        before=(FLOW,),
    ),
    Case(
        "erase",
        "asks what to erase, changes nothing",
        nothing,
        before=(NOTES,),
        chat="changed nothing",
    ),
    Case(
        "wipe it",
        "nothing selected: asks, changes nothing",
        nothing,
        before=(NOTES,),
        chat="changed nothing",
    ),
    Case(
        "delete it", "deletes the selection", _removed({"note": 1}), before=(NOTES,), select="note"
    ),
    Case(
        "delete everything", "clears the canvas (asked for explicitly)", _cleared, before=(NOTES,)
    ),
    Case("clear the canvas", "clears the canvas", _cleared, before=(FLOW,)),
    Case(
        "what time is it?",
        "answers in chat from the request's clock; canvas untouched",
        nothing,
        chat="UTC",
    ),
    Case("how many notes are there?", "counts in chat", nothing, before=(NOTES,), chat="3 note"),
    Case(
        "what is on the canvas?",
        "lists the shapes in chat",
        nothing,
        before=(NOTES,),
        chat="3 shapes",
    ),
    Case("hello", "says what it can do without a real model", nothing, chat="real model"),
]
