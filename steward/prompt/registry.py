"""The prompt parts by name, and the request builder (modes: `steward.fairies.modes`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from steward.model.base import CanvasFacts, ModelRequest
from steward.prompt.base import Block, PromptPart
from steward.prompt.parts import (
    blurry_shapes,
    chat_history,
    context_items,
    data,
    drawable,
    lints,
    neighbours,
    other_fairies,
    peripheral_clusters,
    personality,
    project,
    request_line,
    screenshot,
    selected_shapes,
    system,
    tasks,
    time,
    todo_list,
    user_actions,
    viewport,
)
from steward.prompt.state import PromptState
from steward.prompt.system_prompt import system_prompt

PARTS: dict[str, PromptPart] = {
    m.PART.name: m.PART
    for m in (
        system,
        chat_history,
        screenshot,
        viewport,
        blurry_shapes,
        neighbours,
        peripheral_clusters,
        selected_shapes,
        context_items,
        user_actions,
        todo_list,
        data,
        lints,
        time,
        request_line,
        personality,
        other_fairies,
        project,
        drawable,
        tasks,
    )
}
# What only a fairy has (a name, a personality, other fairies, a project, tasks): a request
# with no fairy behind it leaves these parts and their guides out, so the system prompt
# promises nothing the request does not send.
FAIRY_PARTS = frozenset({"personality", "other_fairies", "project", "tasks"})
ALL_PART_NAMES: tuple[str, ...] = tuple(sorted(PARTS, key=lambda n: PARTS[n].priority))


class PromptMode(Protocol):
    """What a mode gives the prompt (`steward.fairies.modes.ModeDefinition`)."""

    @property
    def name(self) -> str: ...

    @property
    def actions(self) -> tuple[str, ...]: ...

    @property
    def parts(self) -> tuple[str, ...]: ...


def build_blocks(state: PromptState, parts: Iterable[str]) -> list[Block]:
    chosen = sorted(
        (PARTS[p] for p in parts if p in PARTS), key=lambda p: (not p.static, p.priority)
    )
    blocks: list[Block] = []
    for part in chosen:
        blocks.extend(part.build(state))
    return blocks


def build_request(state: PromptState, mode: PromptMode) -> ModelRequest:
    """System prompt (static prefix, cacheable) first, then the dynamic parts in priority order."""
    actions = tuple(a for a in mode.actions if a in state.enabled_actions) or mode.actions
    names = [p for p in mode.parts if p in PARTS]
    if state.fairy is None:
        names = [p for p in names if p not in FAIRY_PARTS]
    static = system_prompt(actions, (PARTS[p] for p in names), mode.name)
    user = build_blocks(state, [p for p in names if not PARTS[p].static])
    hints = {
        "message": state.message,
        # The canvas as held, for a model that reads hints (the scripted one works out what
        # it sees from it): a snapshot of the map, nothing computed here.
        "canvas": CanvasFacts(dict(state.shapes), state.coords),
        "now": state.now_iso,
        "viewport": state.coords.box_to_model("viewport", state.viewport.to_dict()),
        "selection": list(state.selection),
        "shapes": list(state.shapes)[:50],
        "followup": state.followup.kind if state.followup else None,
        "todo": [{"id": t.id, "text": t.text, "status": t.status} for t in state.todo],
    }
    return ModelRequest(system=[static], user=user, hints=hints)
