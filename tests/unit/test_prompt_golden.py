"""Golden system prompts per mode, plus prompt-part behaviour.

Regenerate after an intended change with:
    STEWARD_UPDATE_GOLDEN=1 uv run pytest tests/unit/test_prompt_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from steward.actions.base import TodoItem
from steward.canvas.coords import CoordinateSpace
from steward.fairies.modes import MODES, ModeName
from steward.prompt.parts.chat_history import filter_history
from steward.prompt.parts.lints import lint
from steward.prompt.registry import PARTS, build_request
from steward.prompt.response_schema import response_schema
from steward.prompt.state import ChatItem, PromptState
from steward.prompt.system_prompt import system_prompt
from steward.protocol.box import Box

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


@pytest.mark.parametrize("mode", ["one-shotting", "working-drone", "orchestrating-active"])
def test_system_prompt_golden(mode: ModeName) -> None:
    m = MODES[mode]
    text = system_prompt(m.actions, [PARTS[p] for p in m.parts], m.name)
    path = GOLDEN / f"system-{mode}.txt"
    if os.environ.get("STEWARD_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_drone_prompt_mentions_only_its_actions() -> None:
    m = MODES["working-drone"]
    text = system_prompt(m.actions, [PARTS[p] for p in m.parts], m.name)
    for absent in ("setMyView", "`clear`", "Shapes elsewhere", "create-project-task"):
        assert absent not in text
    variants = response_schema(m.actions)["properties"]["actions"]["items"]["anyOf"]
    names = [v["properties"]["_type"]["const"] for v in variants]
    assert names == list(m.actions) and "mark-my-task-done" in names


def state(**kw: object) -> PromptState:
    shapes = {
        "in": {
            "id": "in",
            "type": "geo",
            "x": 110.4,
            "y": 100,
            "rotation": 0,
            "props": {"geo": "rectangle", "w": 100, "h": 50, "text": "Hi"},
        },
        "far": {
            "id": "far",
            "type": "geo",
            "x": 5000,
            "y": 5000,
            "rotation": 0,
            "props": {"geo": "rectangle", "w": 100, "h": 50},
        },
    }
    base = dict(
        message="make it blue",
        shapes=shapes,
        viewport=Box(100, 100, 800, 600),
        coords=CoordinateSpace(100, 100),
        enabled_actions=MODES["one-shotting"].actions,
        selection=["in"],
    )
    base.update(kw)
    return PromptState(**base)  # type: ignore[arg-type]


def test_static_prefix_first_then_parts_in_priority_order() -> None:
    s = state(todo=[TodoItem(1, "paint", "todo")], now_iso="2025-01-01T00:00:00+00:00")
    req = build_request(s, MODES["one-shotting"])
    assert len(req.system) == 1 and req.system[0].startswith("# Canvas agent (one-shotting)")
    texts = [b["text"] for b in req.user]
    # Which model answers is plumbing (the API call names it), not words for the model.
    assert not any("Model:" in t or "scripted" in t for t in texts)
    order = [
        "Your viewport",
        "Shapes in your view",
        "Shapes outside",
        "The user has",
        "Your todo list",
        "Current time",
        "User request",
    ]
    positions = [next(i for i, t in enumerate(texts) if t.startswith(p)) for p in order]
    assert positions == sorted(positions)
    view = next(t for t in texts if t.startswith("Shapes in your view"))
    assert '"shapeId":"in"' in view and '"x":10' in view and "far" not in view


def test_blurry_cap() -> None:
    req = build_request(state(blurry_cap=0), MODES["one-shotting"])
    view = next(b["text"] for b in req.user if b["text"].startswith("Shapes in your view"))
    assert "(1 more not listed)" in view


def test_memory_level_filter() -> None:
    items = [
        ChatItem("user", "a", "fairy"),
        ChatItem("user", "b", "task"),
        ChatItem("assistant", "c", "fairy"),
    ]
    assert [i.text for i in filter_history(items, "fairy")] == ["a", "c"]


def test_lints() -> None:
    shapes = {
        "t1": {"id": "t1", "type": "text", "x": 0, "y": 0, "props": {"text": "hello"}},
        "t2": {"id": "t2", "type": "text", "x": 10, "y": 5, "props": {"text": "world"}},
        "a": {
            "id": "a",
            "type": "arrow",
            "x": 0,
            "y": 0,
            "props": {},
            "bindings": {"start": "t1", "end": None},
        },
        "g": {"id": "g", "type": "geo", "x": 0, "y": 900, "props": {"w": 10, "h": 10, "growY": 30}},
    }
    found = lint(shapes)
    assert any("'t1' and 't2' overlap" in f for f in found)
    assert any("arrow 'a' has a loose end" in f for f in found)
    assert any("the text of 'g' overflows" in f for f in found)
