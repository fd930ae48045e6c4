"""Relay of users' own edits (`canvas:edit`) into the room's sequenced stream.

Relay mode (default): every edit becomes actions of the room's relay session — `put` records
as `create_shape` (create or replace, keeping z-order), `remove` ids as one `delete_shape` —
and goes through the broadcaster like an agent's actions: sequenced, persisted, acked, sent to
every browser (the sender too, so all apply edits in the same order). Each record is
checked first (`steward.canvas.guard.relay_problem`: a shape of a known kind, numbers within
bounds, bounded size, parent and bindings naming shapes that exist); an edit with any record
that fails is refused whole, logged and counted as a strike of its sender. Host mode: the app syncs
documents itself, so edits are not relayed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from steward.canvas.guard import relay_problem, shape_id
from steward.obs.logging import get_logger
from steward.protocol.messages import CanvasEdit, WireAction
from steward.room.outbound.broadcaster import Broadcaster

log = get_logger(__name__)


def relay_session_id(room_id: str) -> str:
    """One relay session per room; its seq continues across steward restarts (outbox)."""
    return f"relay:{room_id}"


def edit_to_actions(
    edit: CanvasEdit, sender: str, exists: Callable[[str], bool] = lambda _sid: False
) -> list[WireAction]:
    """The edit's actions; raises ValueError naming the first record that may not be relayed
    (`steward.canvas.guard.relay_problem`; a parent or binding may name any shape the same
    edit puts, in whatever order tldraw listed them)."""
    prefix = f"edit-{uuid.uuid4().hex[:10]}"
    actions: list[WireAction] = []
    batch = {sid for r in edit.put if (sid := shape_id(r.get("id"))) is not None}
    for i, record in enumerate(edit.put):
        problem = relay_problem(record, lambda sid: sid in batch or exists(sid))
        if problem is not None:
            raise ValueError(f"put[{i}]: {problem}")
        params: dict[str, Any] = dict(record)
        actions.append(WireAction(id=f"{prefix}-{i}", name="create_shape", params=params))
    if edit.remove:
        actions.append(
            WireAction(id=f"{prefix}-rm", name="delete_shape", params={"ids": list(edit.remove)})
        )
    return actions


class Relay:
    """Turns users' `canvas:edit` packets into the room's relay session, sent through the
    broadcaster."""

    def __init__(self, room_id: str, broadcaster: Broadcaster, *, mode: str = "relay") -> None:
        self.room_id = room_id
        self.session_id = relay_session_id(room_id)
        self._broadcaster = broadcaster
        self.mode = mode
        self.edits = 0
        # Shapes of edits accepted but not yet in the mirror (their send is still queued):
        # a next edit may bind to them.
        self._pending: dict[str, int] = {}

    def _exists(self, sid: str) -> bool:
        return sid in self._pending or sid in self._broadcaster.mirror

    def accept(self, sender: str, edit: CanvasEdit) -> list[WireAction]:
        """Validate an edit into actions; raises ValueError with the reason to refuse it."""
        if self.mode != "relay":
            raise ValueError("host mode: the app syncs user edits itself")
        actions = edit_to_actions(edit, sender, self._exists)
        for action in actions:
            if action.name == "create_shape":
                sid = str(shape_id(action.params["id"]))
                self._pending[sid] = self._pending.get(sid, 0) + 1
        return actions

    async def send(self, sender: str, actions: list[WireAction]) -> None:
        if not actions:
            return
        self.edits += 1
        try:
            await self._broadcaster.send(self.session_id, actions)
        finally:
            for action in actions:
                if action.name == "create_shape":
                    sid = str(shape_id(action.params["id"]))
                    left = self._pending.pop(sid, 1) - 1
                    if left > 0:
                        self._pending[sid] = left
        log.debug("edit_relayed", room=self.room_id, participant=sender, actions=len(actions))
