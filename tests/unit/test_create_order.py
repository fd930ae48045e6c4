"""CreateOrder: an action naming a shape not made yet waits for its create, in model order."""

from __future__ import annotations

from typing import Any

from steward.actions.ordering import CreateOrder, created_id, named_ids
from steward.model.parser import ParsedAction

EXISTING = {"old"}


def done(index: int, data: dict[str, Any]) -> ParsedAction:
    return ParsedAction(index, data, True)


def run(actions: list[dict[str, Any]]) -> list[int]:
    order = CreateOrder(exists=EXISTING.__contains__)
    out: list[int] = []
    for i, data in enumerate(actions):
        out += [e.index for e in order.push(done(i, data))]
    return out + [e.index for e in order.finish()]


def create(sid: str, **extra: Any) -> dict[str, Any]:
    return {"_type": "create", "shape": {"_type": "rectangle", "shapeId": sid, **extra}}


def test_label_and_move_before_their_create_follow_it() -> None:
    actions = [
        {"_type": "label", "shapeId": "a", "text": "A"},
        {"_type": "think", "text": "t"},
        {"_type": "move", "shapeId": "a", "x": 1, "y": 2},
        create("a"),
    ]
    assert run(actions) == [1, 3, 0, 2]


def test_existing_shapes_and_plain_actions_pass_at_once() -> None:
    actions = [
        {"_type": "label", "shapeId": "shape:old", "text": "x"},
        create("b"),
        {"_type": "align", "shapeIds": ["old", "b"], "alignment": "top"},
    ]
    assert run(actions) == [0, 1, 2]


def test_creates_are_never_held() -> None:
    actions = [
        {"_type": "label", "shapeId": "arrow", "text": "x"},
        create("arrow", _type="arrow", fromId="a", toId="old"),
        create("a"),
    ]
    assert run(actions) == [1, 0, 2]


def test_names_never_created_go_out_at_the_end_in_order() -> None:
    actions = [
        {"_type": "delete", "shapeId": "ghost"},
        {"_type": "think", "text": "t"},
        {"_type": "update", "update": {"shapeId": "ghost2", "color": "red"}},
    ]
    assert run(actions) == [1, 0, 2]


def test_partials_of_waiting_actions_are_not_shown() -> None:
    order = CreateOrder(exists=EXISTING.__contains__)
    label = {"_type": "label", "shapeId": "a", "text": "par"}
    assert order.push(ParsedAction(0, label, False, ("text",))) == []
    # The id itself still streaming is not an id yet: its partial may pass.
    cut = {"_type": "label", "shapeId": "a"}
    assert order.push(ParsedAction(0, cut, False, ("shapeId",))) != []
    assert order.push(ParsedAction(0, label, True)) == []
    assert order.holding == 1
    # Once a preview showed, the action follows it even if a later field names a new shape.
    shown = {"_type": "label", "shapeId": "old", "text": "x"}
    assert order.push(ParsedAction(1, shown, False, ("text",))) != []
    grown = {**shown, "shapeIds": ["a"]}
    assert order.push(ParsedAction(1, grown, True)) != []
    # A partial that never shows (align does not stream) decides nothing.
    part = {"_type": "align", "shapeIds": ["old"]}
    assert order.push(ParsedAction(2, part, False)) != []
    assert order.push(ParsedAction(2, {**part, "shapeIds": ["old", "a"]}, True)) == []


def test_what_an_action_names_and_makes() -> None:
    pen = {"_type": "pen", "shapeId": "p1", "points": []}
    assert created_id(pen) == "p1" and named_ids(pen) == set()
    arrow = create("x", _type="arrow", fromId="shape:a", toId="b")
    assert created_id(arrow) == "x" and named_ids(arrow) == set()
    place = {"_type": "place", "shapeId": "a", "referenceShapeId": "b"}
    assert created_id(place) is None and named_ids(place) == {"a", "b"}
    upd = {"_type": "update", "update": {"shapeId": "a", "toId": "c"}}
    assert named_ids(upd) == {"a", "c"}
