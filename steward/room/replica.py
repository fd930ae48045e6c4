"""A canvas replica that applies envelopes with partial-action semantics.

Used by the steward's per-room mirror and by the headless client, so both compute the same
canvas with the one reference applier (`steward.canvas.apply.apply_wire_action`).
A newer version of an action id first reverts what the previous partial version changed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.apply import Shapes, affected_ids, apply_wire_action
from steward.protocol.messages import WireAction


@dataclass
class _Undo:
    records: dict[str, dict[str, Any] | None]
    order: list[str]


@dataclass
class Replica:
    shapes: Shapes = field(default_factory=dict)
    _partials: dict[tuple[str, str], _Undo] = field(default_factory=dict)

    def apply(self, session_id: str, action: WireAction, *, partial: bool) -> None:
        key = (session_id, action.id)
        undo = self._partials.pop(key, None)
        if undo is not None:
            self._revert(undo)
        if partial:
            touched = affected_ids(self.shapes, action)
            self._partials[key] = _Undo(
                records={sid: copy.deepcopy(self.shapes.get(sid)) for sid in touched},
                order=list(self.shapes),
            )
        apply_wire_action(self.shapes, action)

    def in_flight(self, session_id: str) -> list[str]:
        """Ids of this session's actions whose latest version is partial."""
        return [aid for sid, aid in self._partials if sid == session_id]

    def _revert(self, undo: _Undo) -> None:
        for sid, record in undo.records.items():
            if record is None:
                self.shapes.pop(sid, None)
            else:
                self.shapes[sid] = record
        position = {sid: i for i, sid in enumerate(undo.order)}
        ordered = sorted(self.shapes, key=lambda sid: position.get(sid, len(position)))
        restored = {sid: self.shapes[sid] for sid in ordered}
        self.shapes.clear()
        self.shapes.update(restored)
