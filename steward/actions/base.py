"""What every action entry provides, and the per-run state actions read and change."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from steward.actions.fairy_port import ActionEffect
from steward.actions.sanitize import bump_id, clean_id
from steward.canvas.apply import LayoutVerb, Shapes, apply_layout, apply_wire_action
from steward.canvas.coords import CoordinateSpace
from steward.protocol.box import Box
from steward.protocol.messages import WireAction, WireVerb


class ActionModel(BaseModel):
    """Base of every action schema; `_type` is added per action by the registry."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


@dataclass(frozen=True)
class WireOp:
    """A resolved wire verb; the runner gives it a stable action id."""

    name: WireVerb
    params: dict[str, Any]


@dataclass
class TodoItem:
    """One item of a run's todo list, as `update-todo-list` leaves it: its number, its words and how
    far it got."""

    id: int
    text: str
    status: str = "todo"


@dataclass
class Scheduled:
    """Work for the next request of the loop (review, add-detail, setMyView, data)."""

    kind: str  # review | add-detail | view | data
    text: str
    bounds: Box | None = None


@dataclass
class RunState:
    """One run's view of the canvas and its state. `shapes` is the room mirror's map."""

    shapes: Shapes
    # The room's claims (`CanvasMirror.claims`), shared by every run of the room.
    room_claims: set[str] = field(default_factory=set)
    coords: CoordinateSpace = field(default_factory=CoordinateSpace)
    id_map: dict[str, str] = field(default_factory=dict)
    # Actual id claimed by each action index, so partial versions keep one id.
    claimed: dict[int, str] = field(default_factory=dict)
    todo: list[TodoItem] = field(default_factory=list)
    scheduled: list[Scheduled] = field(default_factory=list)
    chat: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # sanitizer remarks, logged per run
    task_bounds: Box | None = None

    def unique_id(self, raw: Any, index: int) -> str | None:
        """A fresh id for a create; the model may keep using its own name (rename map)."""
        if index in self.claimed:
            return self.claimed[index]
        sid = clean_id(raw)
        if sid is None:
            return None
        new = sid
        taken = set(self.claimed.values())
        while new in self.shapes or new in taken or new in self.room_claims:
            new = bump_id(new)
        if new != sid:
            self.id_map[sid] = new
            self.notes.append(f"renamed duplicate id {sid!r} to {new!r}")
        self.claimed[index] = new
        self.room_claims.add(new)
        return new

    def existing_id(self, raw: Any, *, besides: str | None = None) -> str | None:
        """The actual id of a shape the model refers to, or None if there is none.

        `besides`: the id a create claimed for itself; within that create its old name
        still means the shape that had it, whether or not a preview already renamed it.
        """
        sid = clean_id(raw)
        if sid is None:
            return None
        actual = self.id_map.get(sid, sid)
        if besides is not None and actual == besides:
            actual = sid
        return actual if actual in self.shapes and actual != besides else None

    def existing_ids(self, raw: Any) -> list[str]:
        items = raw if isinstance(raw, list) else [raw]
        out = [i for i in (self.existing_id(x) for x in items) if i is not None]
        return list(dict.fromkeys(out))

    def preview(self, ops: list[WireOp]) -> Shapes:
        """The shapes after `ops` are sent, on a copy."""
        shapes = copy.deepcopy(self.shapes)
        for op in ops:
            apply_wire_action(shapes, WireAction(id="preview", name=op.name, params=op.params))
        return shapes

    def preview_layout(self, verb: LayoutVerb, params: dict[str, Any]) -> Shapes:
        """The shapes after one layout verb, on a copy (arrange actions diff against it)."""
        shapes = copy.deepcopy(self.shapes)
        apply_layout(shapes, verb, params)
        return shapes

    def after_ops(self, ops: list[WireOp]) -> Shapes:
        """The shapes after resolved wire ops, on a copy (the history's before/after boxes)."""
        shapes = copy.deepcopy(self.shapes)
        for op in ops:
            apply_wire_action(shapes, WireAction(id="preview", name=op.name, params=op.params))
        return shapes


# What an action may touch, which decides the modes that offer it: `canvas` edits the canvas,
# `talk` talks or plans and never changes the canvas, `fairy` changes the fairies' board
# (offered by name, per mode).
ActionKind = Literal["canvas", "talk", "fairy"]

Sanitize = Callable[[dict[str, Any], RunState, int, bool], dict[str, Any] | None]
Resolve = Callable[[dict[str, Any], RunState], list[WireOp]]


@dataclass(frozen=True)
class ActionSpec:
    """A self-describing action: name, kind, schema, its system-prompt section, sanitize,
    resolve and, for an action that acts beyond the canvas, its effect."""

    name: str
    family: str
    kind: ActionKind
    schema: type[ActionModel]
    description: str  # one line, in the response schema
    guide: str  # its section of the system prompt: how and when to use it (see docs/PROMPT.md)
    sanitize: Sanitize
    resolve: Resolve
    # Fields (top-level or `shape.<field>`) holding enums or ids: held back while streaming.
    atomic_fields: tuple[str, ...] = ()
    # True when partial versions may already change the canvas or chat.
    streams: bool = False
    # True when the loop must run another request after this action.
    continues: bool = False
    # What a complete version does beyond the canvas (fairy actions); None: canvas/chat only.
    effect: ActionEffect | None = None
    # What the user reads in the chat from a sanitized version (None: nothing).
    chat: Callable[[dict[str, Any]], str] | None = None
    # Where it names the shape it creates (`shapeId` or `shape.shapeId`): the actions that
    # name that shape wait for it (`ordering.py`). None: it creates none.
    creates: str | None = None
    # True for the plan (projects and tasks): kept in the fairy's chat history however long.
    plans: bool = False
    # False for the catch-all no mode offers (the model may still name it).
    offered: bool = True
