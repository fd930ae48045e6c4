"""Every action by name (one line each), and the step from a parsed action to resolved wire
ops."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from steward.actions import arrange, communicate, fairy, shapes
from steward.actions.base import ActionSpec, RunState, WireOp

# Every action, one line each, in the order prompts and response schemas list them. An
# action is whole in its family's module (schema, guide, sanitize, resolve, kind, effect).
_REGISTERED: tuple[ActionSpec, ...] = (
    communicate.MESSAGE,
    communicate.THINK,
    communicate.REVIEW,
    communicate.ADD_DETAIL,
    communicate.UPDATE_TODO_LIST,
    communicate.SET_MY_VIEW,
    communicate.COUNT,
    communicate.UNKNOWN,
    shapes.CREATE,
    shapes.UPDATE,
    shapes.DELETE,
    shapes.LABEL,
    shapes.CLEAR,
    shapes.PEN,
    arrange.MOVE,
    arrange.PLACE,
    arrange.BRING_TO_FRONT,
    arrange.SEND_TO_BACK,
    arrange.ROTATE,
    arrange.RESIZE,
    arrange.ALIGN,
    arrange.DISTRIBUTE,
    arrange.STACK,
    fairy.CREATE_TASK,
    fairy.START_TASK,
    fairy.MARK_TASK_DONE,
    fairy.START_PROJECT,
    fairy.CREATE_PROJECT_TASK,
    fairy.DELETE_PROJECT_TASK,
    fairy.DIRECT_TO_START_PROJECT_TASK,
    fairy.AWAIT_TASKS_COMPLETION,
    fairy.END_PROJECT,
    fairy.ABORT_PROJECT,
    fairy.START_DUO_PROJECT,
    fairy.CREATE_DUO_TASK,
    fairy.DIRECT_TO_START_DUO_TASK,
    fairy.START_DUO_TASK,
    fairy.MARK_DUO_TASK_DONE,
    fairy.AWAIT_DUO_TASKS_COMPLETION,
    fairy.END_DUO_PROJECT,
    fairy.ABORT_DUO_PROJECT,
    fairy.MARK_MY_TASK_DONE,
    fairy.FLY_TO_BOUNDS,
)


def _by_name(specs: Iterable[ActionSpec]) -> dict[str, ActionSpec]:
    out: dict[str, ActionSpec] = {}
    for spec in specs:
        if spec.name in out:
            raise ValueError(f"action {spec.name!r} is registered twice")
        out[spec.name] = spec
    return out


ACTIONS: dict[str, ActionSpec] = _by_name(_REGISTERED)
ALL_ACTION_NAMES: tuple[str, ...] = tuple(ACTIONS)


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
