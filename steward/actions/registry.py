"""Every action by name, and the step from a parsed action to resolved wire ops."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from steward.actions import arrange, communicate, fairy, shapes
from steward.actions.base import ActionSpec, RunState, WireOp

ACTIONS: dict[str, ActionSpec] = {
    spec.name: spec for family in (communicate, shapes, arrange, fairy) for spec in family.SPECS
}
ALL_ACTION_NAMES: tuple[str, ...] = tuple(ACTIONS)


def names_of(*families: str) -> tuple[str, ...]:
    """Action names of these families (`communicate`, `shapes`, `arrange`, `fairy`)."""
    return tuple(n for n, s in ACTIONS.items() if s.family in families)


_BY_LOWER = {name.lower().replace("-", "").replace("_", ""): name for name in ACTIONS}
NAME_ALIASES = {
    "createshape": "create",
    "add": "create",
    "updateshape": "update",
    "edit": "update",
    "deleteshape": "delete",
    "remove": "delete",
    "todo": "update-todo-list",
    "updatetodo": "update-todo-list",
    "setview": "setMyView",
    "draw": "pen",
    "tofront": "bringToFront",
    "toback": "sendToBack",
    "chat": "message",
    "say": "message",
}


def normalize_name(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    key = raw.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    return _BY_LOWER.get(key) or NAME_ALIASES.get(key)


def select(names: Iterable[str] | None = None) -> dict[str, ActionSpec]:
    """The enabled subset, in registry order (unknown names are ignored)."""
    if names is None:
        return dict(ACTIONS)
    wanted = set(names)
    return {n: s for n, s in ACTIONS.items() if n in wanted}


@dataclass
class Outcome:
    index: int
    name: str
    complete: bool
    ops: list[WireOp] = field(default_factory=list)
    chat: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    spec: ActionSpec | None = None


def process(
    data: Mapping[str, Any],
    *,
    index: int,
    complete: bool,
    incomplete_path: Sequence[str | int] | None,
    ctx: RunState,
    enabled: Mapping[str, ActionSpec],
) -> Outcome | None:
    """Sanitize and resolve one (partial or complete) action; None means nothing to do yet."""
    if incomplete_path is not None and tuple(incomplete_path) == ("_type",):
        return None  # the action's name is still streaming
    name = normalize_name(data.get("_type"))
    spec = enabled.get(name) if name else None
    if spec is None:
        if complete:
            what = str(data.get("_type"))[:40]
            ctx.notes.append(f"action {what!r} is not available here; ignored")
        return None
    if not complete and not spec.streams:
        return None
    work = copy.deepcopy(dict(data))
    work["_type"] = spec.name
    if incomplete_path and ".".join(str(p) for p in incomplete_path) in spec.atomic_fields:
        # A partial enum or id string ("rect" of "rectangle") must not be used yet.
        node: Any = work
        for key in incomplete_path[:-1]:
            node = node[key]
        del node[incomplete_path[-1]]
    clean = spec.sanitize(work, ctx, index, complete)
    if clean is None:
        return None
    ops = spec.resolve(clean, ctx)
    chat = spec.chat(clean) if spec.chat is not None else None
    return Outcome(index, spec.name, complete, ops, chat, clean, spec)
