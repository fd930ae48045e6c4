"""Every action by name (one line each), and the step from a parsed action to resolved wire
ops."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from steward.actions.arrange.align import ALIGN
from steward.actions.arrange.bring_forward import BRING_FORWARD
from steward.actions.arrange.bring_to_front import BRING_TO_FRONT
from steward.actions.arrange.distribute import DISTRIBUTE
from steward.actions.arrange.move import MOVE
from steward.actions.arrange.place import PLACE
from steward.actions.arrange.resize import RESIZE
from steward.actions.arrange.rotate import ROTATE
from steward.actions.arrange.send_backward import SEND_BACKWARD
from steward.actions.arrange.send_to_back import SEND_TO_BACK
from steward.actions.arrange.stack import STACK
from steward.actions.base import ActionSpec, RunState, WireOp
from steward.actions.communicate.add_detail import ADD_DETAIL
from steward.actions.communicate.count import COUNT
from steward.actions.communicate.message import MESSAGE
from steward.actions.communicate.review import REVIEW
from steward.actions.communicate.set_my_view import SET_MY_VIEW
from steward.actions.communicate.think import THINK
from steward.actions.communicate.unknown import UNKNOWN
from steward.actions.communicate.update_todo_list import UPDATE_TODO_LIST
from steward.actions.fairy.abort_duo_project import ABORT_DUO_PROJECT
from steward.actions.fairy.abort_project import ABORT_PROJECT
from steward.actions.fairy.await_duo_tasks_completion import AWAIT_DUO_TASKS_COMPLETION
from steward.actions.fairy.await_tasks_completion import AWAIT_TASKS_COMPLETION
from steward.actions.fairy.create_duo_task import CREATE_DUO_TASK
from steward.actions.fairy.create_project_task import CREATE_PROJECT_TASK
from steward.actions.fairy.create_task import CREATE_TASK
from steward.actions.fairy.delete_project_task import DELETE_PROJECT_TASK
from steward.actions.fairy.direct_to_start_duo_task import DIRECT_TO_START_DUO_TASK
from steward.actions.fairy.direct_to_start_project_task import DIRECT_TO_START_PROJECT_TASK
from steward.actions.fairy.end_duo_project import END_DUO_PROJECT
from steward.actions.fairy.end_project import END_PROJECT
from steward.actions.fairy.fly_to_bounds import FLY_TO_BOUNDS
from steward.actions.fairy.mark_duo_task_done import MARK_DUO_TASK_DONE
from steward.actions.fairy.mark_my_task_done import MARK_MY_TASK_DONE
from steward.actions.fairy.mark_task_done import MARK_TASK_DONE
from steward.actions.fairy.start_duo_project import START_DUO_PROJECT
from steward.actions.fairy.start_duo_task import START_DUO_TASK
from steward.actions.fairy.start_project import START_PROJECT
from steward.actions.fairy.start_task import START_TASK
from steward.actions.shapes.clear import CLEAR
from steward.actions.shapes.create import CREATE
from steward.actions.shapes.delete import DELETE
from steward.actions.shapes.label import LABEL
from steward.actions.shapes.pen import PEN
from steward.actions.shapes.update import UPDATE

# Every action, one line each, in the order prompts and response schemas list them. An
# action is whole in its own module of its family's package (schema, guide, sanitize,
# resolve, kind, effect), named for it; what several actions of a family share sits in a
# module of that package named for what it holds.
_REGISTERED: tuple[ActionSpec, ...] = (
    MESSAGE,
    THINK,
    REVIEW,
    ADD_DETAIL,
    UPDATE_TODO_LIST,
    SET_MY_VIEW,
    COUNT,
    UNKNOWN,
    CREATE,
    UPDATE,
    DELETE,
    LABEL,
    CLEAR,
    PEN,
    MOVE,
    PLACE,
    BRING_TO_FRONT,
    SEND_TO_BACK,
    BRING_FORWARD,
    SEND_BACKWARD,
    ROTATE,
    RESIZE,
    ALIGN,
    DISTRIBUTE,
    STACK,
    CREATE_TASK,
    START_TASK,
    MARK_TASK_DONE,
    START_PROJECT,
    CREATE_PROJECT_TASK,
    DELETE_PROJECT_TASK,
    DIRECT_TO_START_PROJECT_TASK,
    AWAIT_TASKS_COMPLETION,
    END_PROJECT,
    ABORT_PROJECT,
    START_DUO_PROJECT,
    CREATE_DUO_TASK,
    DIRECT_TO_START_DUO_TASK,
    START_DUO_TASK,
    MARK_DUO_TASK_DONE,
    AWAIT_DUO_TASKS_COMPLETION,
    END_DUO_PROJECT,
    ABORT_DUO_PROJECT,
    MARK_MY_TASK_DONE,
    FLY_TO_BOUNDS,
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
    """What one parsed action came to: the wire ops to send, chat text, the sanitized data and the
    spec it ran under."""

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
    # The frame its coordinates are written in (the page point that is the model's 0, 0):
    # a later request in another frame reads its echo moved into its own.
    clean["_frame"] = [ctx.coords.origin_x, ctx.coords.origin_y]
    ops = spec.resolve(clean, ctx)
    chat = spec.chat(clean) if spec.chat is not None else None
    return Outcome(index, spec.name, complete, ops, chat, clean, spec)
