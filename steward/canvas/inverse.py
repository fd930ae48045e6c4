"""The inverse of one run: what takes the canvas back to before the run touched it.

A run's effect is read off the room's history (its envelopes, every session's, in room
order) by replaying it through a `CanvasMirror`, so partial versions, cancels and other
sessions' interleaved edits count exactly as the browsers applied them. For every shape the
run touched, the replay keeps two images: *before* (the record just before the run first
touched it; None: it did not exist) and *after* (the record right after the run last touched
it). A shape whose record now differs from its after-image was changed since (by a user, or
another run): it is left as it is and named. Every other shape goes back to its before-image:

- created by the run → deleted;
- deleted by the run → created again from its before-image (parents before children, arrows
  last, then moved back to its place in the z-order);
- changed by the run → replaced by its before-image (`create_shape` replaces a record in
  place, keeping its z-order).

The inverse is itself a run, so reverting it computes the redo the same way.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.apply import Shape, Shapes, affected_ids, apply_wire_actions
from steward.canvas.mirror import CanvasMirror
from steward.protocol.messages import WireAction


@dataclass(frozen=True)
class HistoryEnvelope:
    """One envelope of the room's history, its fragments already reassembled."""

    session_id: str
    partial: bool
    actions: list[WireAction]


@dataclass
class RunInverse:
    """What reverting a run sends, and what it found."""

    actions: list[WireAction] = field(default_factory=list)
    # Shapes the run touched whose record differs from before it (ids, in z-order of touch).
    touched: list[str] = field(default_factory=list)
    # Of those: put back (re-created or replaced), and deleted (the run created them).
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    # Changed since the run touched them: left as they are.
    left: list[str] = field(default_factory=list)
    # Whether the run has any envelope in the history at all.
    found: bool = False


@dataclass
class _Images:
    before: dict[str, Shape | None] = field(default_factory=dict)
    after: dict[str, Shape | None] = field(default_factory=dict)
    # The z-order just before the run first touched each shape's neighbourhood: the order of
    # the whole canvas when the run's first envelope arrived.
    order_before: list[str] = field(default_factory=list)
    found: bool = False


def _replay(
    history: Iterable[HistoryEnvelope], runs: Collection[str]
) -> tuple[_Images, CanvasMirror]:
    mirror = CanvasMirror()
    images = _Images()
    for env in history:
        ours = env.session_id in runs
        if ours and not images.found:
            images.found = True
            images.order_before = list(mirror.shapes)
        for action in env.actions:
            if ours:
                for sid in affected_ids(mirror.shapes, action):
                    if sid not in images.before:
                        images.before[sid] = copy.deepcopy(mirror.shapes.get(sid))
            mirror.apply_one(action, partial=env.partial, session=env.session_id)
        if ours:  # a final version may have reverted a partial one: refresh every image
            for sid in images.before:
                images.after[sid] = copy.deepcopy(mirror.shapes.get(sid))
    return images, mirror


def _depth(sid: str, records: Mapping[str, Shape | None]) -> int:
    depth, seen = 0, {sid}
    rec = records.get(sid)
    while rec is not None and isinstance(rec.get("parentId"), str):
        parent = rec["parentId"]
        if parent in seen:
            break
        seen.add(parent)
        depth += 1
        rec = records.get(parent)
    return depth


def _binds(rec: Shape) -> bool:
    binds = rec.get("bindings")
    return isinstance(binds, dict) and any(isinstance(v, str) for v in binds.values())


def _record_params(rec: Shape) -> dict[str, Any]:
    return copy.deepcopy(dict(rec))


def _wanted_order(result: list[str], recreated: list[str], order_before: list[str]) -> list[str]:
    """`result` with each re-created shape moved back after the shape that preceded it
    before the run (or before the one that followed it, or to the back)."""
    moving = set(recreated)
    order = [sid for sid in result if sid not in moving]
    position = {sid: i for i, sid in enumerate(order_before)}
    for sid in sorted(recreated, key=lambda s: position.get(s, len(position))):
        if sid not in result:
            continue
        i = position.get(sid)
        anchor = None
        if i is not None:
            anchor = next((p for p in reversed(order_before[:i]) if p in order), None)
        if anchor is not None:
            order.insert(order.index(anchor) + 1, sid)
            continue
        after = None
        if i is not None:
            after = next((n for n in order_before[i + 1 :] if n in order), None)
        order.insert(order.index(after) if after is not None else 0, sid)
    return order


def _reorders(now: list[str], wanted: list[str], new_id: Any) -> list[WireAction]:
    """`reorder … front` of each shape from the first misplaced one on, in wanted order:
    every client then has exactly `wanted`."""
    first = next((i for i, (a, b) in enumerate(zip(now, wanted, strict=True)) if a != b), None)
    if first is None:
        return []
    return [
        WireAction(id=new_id(), name="reorder", params={"ids": [sid], "to": "front"})
        for sid in wanted[first:]
    ]


def run_inverse(
    history: Iterable[HistoryEnvelope],
    run_id: str | Collection[str],
    *,
    current: Shapes | None = None,
    id_prefix: str = "undo",
) -> RunInverse:
    """The inverse of run `run_id` against `current` (default: the canvas the history ends
    in; the room's live mirror when given, which is the same in relay mode). Several runs
    (a project's) are taken back as one: each shape goes back to before the first of them
    touched it."""
    runs = frozenset((run_id,) if isinstance(run_id, str) else run_id)
    images, replayed = _replay(history, runs)
    now = replayed.shapes if current is None else current
    out = RunInverse(found=images.found)
    counter = iter(range(1_000_000))

    def new_id() -> str:
        return f"{id_prefix}-{next(counter)}"

    puts: list[str] = []
    deletes: list[str] = []
    for sid, before in images.before.items():
        after = images.after.get(sid)
        if before == after:
            continue  # the run left it as it found it (a partial later withdrawn)
        out.touched.append(sid)
        if now.get(sid) != after:
            if now.get(sid) != before:  # as before the run already (reverted): nothing to do
                out.left.append(sid)
        elif before is None:
            deletes.append(sid)
        else:
            puts.append(sid)
    # Parents first (a child names an existing parent), arrows after what they bind to.
    before_records = images.before
    puts.sort(key=lambda s: (_binds(before_records[s] or {}), _depth(s, before_records)))
    for sid in puts:
        rec = before_records[sid]
        assert rec is not None
        out.actions.append(WireAction(id=new_id(), name="create_shape", params=_record_params(rec)))
    if deletes:
        out.actions.append(WireAction(id=new_id(), name="delete_shape", params={"ids": deletes}))
    out.restored, out.removed = puts, deletes
    recreated = [sid for sid in puts if sid not in now]
    if recreated:
        result = copy.deepcopy(now)
        apply_wire_actions(result, out.actions)
        order = list(result)
        out.actions.extend(
            _reorders(order, _wanted_order(order, recreated, images.order_before), new_id)
        )
    return out
