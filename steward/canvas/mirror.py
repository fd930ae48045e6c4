"""One room's canvas as the steward knows it, kept in step with what the browsers apply.

The room owns one `CanvasMirror`: every envelope it sends is applied here, through the one
reference applier (`apply_wire_action`), with the browsers' partial-action semantics: a newer
version of an action id (within its session) first reverts what the previous partial version
changed. Records and actions enter only past the numeric guard (`steward.canvas.guard`): the
relay, the outbox replay and browsers' context replies all pass through here. Agents read
it through `steward.ports.CanvasView`; the headless client and the benches use the same
class as a client replica, so all of them compute the same canvas.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.apply import Shape, Shapes, affected_ids, apply_wire_action
from steward.canvas.guard import geometry_problem
from steward.obs.logging import get_logger
from steward.protocol.limits import MAX_ID_CHARS
from steward.protocol.messages import WireAction

log = get_logger(__name__)


def normalize_record(raw: Mapping[str, Any]) -> Shape | None:
    """A shape record from untrusted JSON, or None when it has no usable id or numbers
    geometry cannot take (`steward.canvas.guard`)."""
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
    return record if geometry_problem(record) is None else None


@dataclass
class _Undo:
    before: dict[str, Shape | None]
    order: list[str]


def withdrawals(ids: Iterable[str], why: str) -> list[WireAction]:
    """The final version of each in-flight action that withdraws it: a no-op under the same
    id, so every receiver (browsers, the mirror, an outbox replay) undoes the partial it
    applied. The one way a run's previews are taken back."""
    return [WireAction(id=i, name="think", params={"text": why}) for i in ids]


@dataclass
class CanvasMirror:
    """Shapes (key order = z-order) plus the undo data of in-flight partials, per session."""

    shapes: Shapes = field(default_factory=dict)
    version: int = 0
    # Actions left out because their numbers cannot enter geometry.
    refused: int = 0
    _partials: dict[tuple[str, str], _Undo] = field(default_factory=dict)
    # Ids runs have claimed for creates whose final version is not here yet (still
    # streaming, or a preview held back by pacing): another run's create must not take one,
    # or the second create silently replaces the first run's shape.
    claims: set[str] = field(default_factory=set)

    # -- loading -----------------------------------------------------------------------
    def load(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Replace the shapes with a browser's; returns how many were kept.

        The undo data of in-flight partials stays: their final versions still revert them.
        """
        shapes: Shapes = {}
        for raw in records:
            rec = normalize_record(raw) if isinstance(raw, Mapping) else None
            if rec is not None:
                shapes[rec["id"]] = rec
        self.shapes.clear()
        self.shapes.update(shapes)
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
    def apply(
        self, actions: Iterable[WireAction], *, partial: bool = False, session: str = ""
    ) -> None:
        """Apply a batch as the browsers do for one envelope of `session`."""
        for action in actions:
            self.apply_one(action, partial=partial, session=session)

    def apply_one(self, action: WireAction, *, partial: bool = False, session: str = "") -> None:
        problem = geometry_problem(action.params)
        if problem is not None:  # an outbox written before the guard, or a model's slip
            self.refused += 1
            log.warning("action_not_applied", action=action.name, id=action.id, reason=problem)
            return
        key = (session, action.id)
        undo = self._partials.pop(key, None)
        if undo is not None:
            self._revert(undo)
        if partial:
            touched = affected_ids(self.shapes, action)
            self._partials[key] = _Undo(
                before={sid: copy.deepcopy(self.shapes.get(sid)) for sid in touched},
                order=list(self.shapes),
            )
        apply_wire_action(self.shapes, action)
        self.version += 1
        if not partial and self.claims:
            sid = action.params.get("id")
            if isinstance(sid, str) and sid in self.shapes:  # created: the claim is done
                self.claims.discard(sid)

    def _revert(self, undo: _Undo) -> None:
        for sid, old in undo.before.items():
            if old is None:
                self.shapes.pop(sid, None)
            else:
                self.shapes[sid] = old
        position = {sid: i for i, sid in enumerate(undo.order)}
        ordered = sorted(self.shapes, key=lambda sid: position.get(sid, len(position)))
        restored = {sid: self.shapes[sid] for sid in ordered}
        self.shapes.clear()
        self.shapes.update(restored)

    def in_flight(self, session: str | None = None) -> list[str]:
        """Ids of `session`'s (None: any session's) actions whose latest version is partial."""
        return [aid for sid, aid in self._partials if session is None or sid == session]

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
