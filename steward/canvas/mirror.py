"""The steward's copy of one room's canvas, kept in step with what the browsers apply.

It is loaded from the host's context shapes and then changed by every wire action the
steward sends, through `apply_wire_action`, with the same partial-action semantics as the
browsers: a newer version of an action id first reverts what the previous partial version
changed.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.apply import ORDER_VERBS, Shape, Shapes, affected_ids, apply_wire_action
from steward.protocol.limits import MAX_ID_CHARS
from steward.protocol.messages import WireAction


@dataclass
class _Undo:
    before: dict[str, Shape | None]
    order: list[str] | None


def normalize_record(raw: Mapping[str, Any]) -> Shape | None:
    """A shape record from untrusted JSON, or None when it has no usable id."""
    sid = raw.get("id")
    if not isinstance(sid, str) or not sid or len(sid) > MAX_ID_CHARS:
        return None
    if sid.startswith("shape:"):
        sid = sid[len("shape:") :]

    def finite(v: Any) -> float:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        return float(v) if ok else 0.0

    props = raw.get("props")
    record: Shape = {
        "id": sid,
        "type": str(raw.get("type") or "unknown"),
        "x": finite(raw.get("x")),
        "y": finite(raw.get("y")),
        "rotation": finite(raw.get("rotation")),
        "props": copy.deepcopy(dict(props)) if isinstance(props, Mapping) else {},
    }
    parent = raw.get("parentId")
    if isinstance(parent, str) and parent and not parent.startswith("page:"):
        record["parentId"] = parent.removeprefix("shape:")
    meta = raw.get("meta")
    if isinstance(meta, Mapping) and meta:
        record["meta"] = copy.deepcopy(dict(meta))
    binds = raw.get("bindings")
    if isinstance(binds, Mapping):
        record["bindings"] = {
            str(k): (v.removeprefix("shape:") if isinstance(v, str) else None)
            for k, v in binds.items()
        }
    return record


@dataclass
class CanvasMirror:
    """One room's shapes (key order = z-order) plus the undo data of in-flight partials."""

    shapes: Shapes = field(default_factory=dict)
    version: int = 0
    _partials: dict[str, _Undo] = field(default_factory=dict)

    # -- loading -----------------------------------------------------------------------
    def load(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Replace the whole canvas with the host's shapes; returns how many were kept."""
        shapes: Shapes = {}
        for raw in records:
            rec = normalize_record(raw) if isinstance(raw, Mapping) else None
            if rec is not None:
                shapes[rec["id"]] = rec
        self.shapes = shapes
        self._partials.clear()
        self.version += 1
        return len(shapes)

    def put_records(self, records: Iterable[Mapping[str, Any]]) -> None:
        """A user's own edits (relay mode `canvas:edit` put)."""
        for raw in records:
            rec = normalize_record(raw) if isinstance(raw, Mapping) else None
            if rec is not None:
                self.shapes[rec["id"]] = rec
        self.version += 1

    def remove(self, ids: Iterable[str]) -> None:
        apply_wire_action(
            self.shapes, WireAction(id="remove", name="delete_shape", params={"ids": list(ids)})
        )
        self.version += 1

    # -- actions -----------------------------------------------------------------------
    def apply(self, actions: Iterable[WireAction], *, partial: bool = False) -> None:
        """Apply a batch as the browsers do for one envelope."""
        for action in actions:
            self.apply_one(action, partial=partial)

    def apply_one(self, action: WireAction, *, partial: bool = False) -> None:
        self._revert(action.id)
        if partial:
            ids = affected_ids(self.shapes, action)
            before = {i: copy.deepcopy(self.shapes.get(i)) for i in ids}
            order = list(self.shapes) if action.name in ORDER_VERBS else None
            self._partials[action.id] = _Undo(before, order)
        apply_wire_action(self.shapes, action)
        self.version += 1

    def _revert(self, action_id: str) -> bool:
        undo = self._partials.pop(action_id, None)
        if undo is None:
            return False
        for sid, old in undo.before.items():
            if old is None:
                self.shapes.pop(sid, None)
            else:
                self.shapes[sid] = old
        if undo.order is not None:
            order = [i for i in undo.order if i in self.shapes]
            order += [i for i in self.shapes if i not in set(order)]
            self.shapes = {i: self.shapes[i] for i in order}
        return True

    def in_flight(self) -> list[str]:
        return list(self._partials)

    def revert_ops(self, action_id: str, *, new_id: str) -> list[WireAction]:
        """Final ops undoing the in-flight partial `action_id` (for cancel), applied here too.

        Receivers get explicit inverse ops: delete what the partial created, re-create (in
        place) what it changed or removed.
        """
        undo = self._partials.get(action_id)
        if undo is None:
            return []
        created = [sid for sid, old in undo.before.items() if old is None and sid in self.shapes]
        ops: list[WireAction] = []
        if created:
            ops.append(WireAction(id=f"{new_id}-d", name="delete_shape", params={"ids": created}))
        n = 0
        for sid, old in undo.before.items():
            if old is not None and self.shapes.get(sid) != old:
                params = {k: v for k, v in old.items()}
                ops.append(WireAction(id=f"{new_id}-c{n}", name="create_shape", params=params))
                n += 1
        # Our own copy: drop the partial's undo and apply the inverse like a browser would.
        self._partials.pop(action_id, None)
        for op in ops:
            apply_wire_action(self.shapes, op)
        self.version += 1
        return ops

    def commit(self, action_id: str) -> None:
        """Forget the undo data of an action whose final version was applied elsewhere."""
        self._partials.pop(action_id, None)

    # -- reads -------------------------------------------------------------------------
    def get(self, shape_id: str) -> Shape | None:
        return self.shapes.get(shape_id)

    def __contains__(self, shape_id: object) -> bool:
        return shape_id in self.shapes

    def __len__(self) -> int:
        return len(self.shapes)

    def snapshot(self) -> list[Shape]:
        """Records in z-order (deep copies), e.g. to compare with a client's canvas."""
        return [copy.deepcopy(s) for s in self.shapes.values()]
