"""A bad field is dropped with a note to the model, never turned into a default."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from steward.actions.base import RunState
from steward.actions.fields import FIELDS, clean_fields
from steward.actions.registry import ACTIONS, process
from steward.canvas.coords import CoordinateSpace
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.fairies.runtime import FairyRuntime
from steward.ports import PromptInput
from steward.prompt.parts.lints import PART as LINTS
from steward.prompt.state import PromptState
from steward.protocol.box import Box
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession, MemorySessions

RED_BOX = {
    "id": "box",
    "type": "geo",
    "x": 0.0,
    "y": 0.0,
    "rotation": 0.0,
    "props": {
        "geo": "rectangle",
        "w": 100.0,
        "h": 50.0,
        "color": "red",
        "fill": "solid",
        "text": "Start",
    },
}


def update(**fields: Any) -> tuple[Any, RunState]:
    ctx = RunState(shapes={"box": dict(RED_BOX)})
    action = {"_type": "update", "intent": "t", "update": {"shapeId": "box", **fields}}
    out = process(action, index=0, complete=True, incomplete_path=None, ctx=ctx, enabled=ACTIONS)
    return out, ctx


def test_a_bad_colour_leaves_the_colour_as_it_was() -> None:
    out, ctx = update(color=7)
    assert out is not None and out.ops == []  # nothing else asked: nothing changes
    assert any("update of 'box'" in n and "color 7 is not a colour" in n for n in ctx.notes)


def test_the_good_fields_of_an_update_still_apply() -> None:
    out, ctx = update(color=7, w=300, fill="nonsense", text="Go")
    assert out is not None and len(out.ops) == 1
    params = out.ops[0].params
    assert params["props"] == {"w": 300.0, "text": "Go"}  # colour and fill untouched
    assert len([n for n in ctx.notes if "left as it was" in n]) == 2


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"w": 0}, "positive size"),
        ({"x": "left"}, "use move"),
        ({"fontSize": 30}, "no field"),
        ({"textAlign": "justify"}, "start, middle or end"),
        ({"text": {"a": 1}}, "not text"),
    ],
)
def test_each_kind_checks_its_own_fields(fields: dict[str, Any], why: str) -> None:
    out, ctx = update(**fields)
    assert out is not None and out.ops == []
    assert any(why in n for n in ctx.notes), ctx.notes


def test_a_create_leaves_a_bad_field_out_with_a_note() -> None:
    ctx = RunState(shapes={})
    shape = {"_type": "note", "shapeId": "n", "x": 0, "y": 0, "color": "chartreuse", "w": 5}
    action = {"_type": "create", "intent": "t", "shape": shape}
    for complete in (False, True):
        out = process(
            action, index=0, complete=complete, incomplete_path=None, ctx=ctx, enabled=ACTIONS
        )
        assert out is not None and out.ops[0].params["props"]["color"] == "yellow"
        assert len(ctx.notes) == (2 if complete else 0)  # partial versions note nothing


def test_fields_come_from_the_shape_models() -> None:
    assert "fontSize" in FIELDS["text"] and "fontSize" not in FIELDS["rectangle"]
    assert FIELDS["ellipse"] == FIELDS["rectangle"] and "toId" in FIELDS["arrow"]
    clean, dropped = clean_fields("arrow", {"x1": "5", "bend": None, "toId": None})
    assert clean == {"x1": 5.0, "toId": None} and dropped == ["bend None is not a number"]


def state(notes: list[str]) -> PromptState:
    return PromptState(
        message="m",
        shapes={},
        viewport=Box(0, 0, 10, 10),
        coords=CoordinateSpace(),
        enabled_actions=(),
        notes=notes,
    )


def test_notes_are_shown_in_the_lints_part() -> None:
    assert LINTS.build(state([])) == []
    (block,) = LINTS.build(state(["update of 'box': color 7 is not a colour"]))
    assert "- update of 'box': color 7 is not a colour" in block["text"]


def test_the_next_prompt_tells_the_model_what_was_dropped() -> None:
    bad = '{"_type": "update", "intent": "blue", "update": {"shapeId": "box", "color": 7}}]}'
    model = CannedModel([bad, "]}"])
    agent = OneShotRunner(OneShotConfig(settings=Settings(steward_max_followups=0), model=model))
    session = MemorySession(MemoryRoom(shapes=[dict(RED_BOX)]))

    async def two_prompts() -> None:
        for message in ("make it blue", "and now?"):
            await agent.run(session, PromptInput(message=message, source="system", requester="t"))

    asyncio.run(two_prompts())
    assert session.browser.shapes["box"]["props"]["color"] == "red"
    first, second = ("\n".join(str(b.get("text", "")) for b in r.user) for r in model.requests)
    assert "color 7 is not a colour" not in first
    assert "color 7 is not a colour" in second


def test_a_fairy_is_told_about_its_last_actions_too() -> None:
    odd = '{"_type": "explode", "intent": "?"}, {"_type": "message", "text": "Planning."}]}'
    model = CannedModel([odd, "]}"])
    runtime = FairyRuntime(sessions=MemorySessions(MemoryRoom()), models=lambda _name, _role: model)
    session = MemorySession(MemoryRoom(), room_id="room-n", fairy="lead")

    async def two_prompts() -> None:
        for message in ("plan a farm", "go on"):
            await runtime.run(
                session, PromptInput(message=message, source="browser", requester="u")
            )

    asyncio.run(two_prompts())
    told = [
        "'explode' is not available here" in "\n".join(str(b.get("text", "")) for b in r.user)
        for r in model.requests
    ]
    assert told == [False, True]  # the orchestrator's next prompt, once
