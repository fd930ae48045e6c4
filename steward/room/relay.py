"""Relay of users' own edits (`canvas:edit`) into the room's sequenced stream.

Relay mode (default): every edit becomes actions of the room's relay session — `put` records
as `create_shape` (create or replace, keeping z-order), `remove` ids as one `delete_shape` —
and goes through the broadcaster like an agent's actions: sequenced, persisted, acked, sent to
every browser (the sender too, so all apply edits in the same order). Host mode: the app syncs
documents itself, so edits are not relayed.
"""

from __future__ import annotations

import uuid
from typing import Any

from steward.obs.logging import get_logger
from steward.protocol.messages import CanvasEdit, WireAction
from steward.room.broadcaster import Broadcaster

log = get_logger(__name__)


def relay_session_id(room_id: str) -> str:
    """One relay session per room; its seq continues across steward restarts (outbox)."""
    return f"relay:{room_id}"


def edit_to_actions(edit: CanvasEdit, sender: str) -> list[WireAction]:
    prefix = f"edit-{uuid.uuid4().hex[:10]}"
    actions: list[WireAction] = []
    for i, record in enumerate(edit.put):
        rid = record.get("id")
        if not isinstance(rid, str) or not rid:
            raise ValueError(f"put[{i}] has no string id")
        params: dict[str, Any] = dict(record)
        actions.append(WireAction(id=f"{prefix}-{i}", name="create_shape", params=params))
    if edit.remove:
        actions.append(
            WireAction(id=f"{prefix}-rm", name="delete_shape", params={"ids": list(edit.remove)})
        )
    return actions


class Relay:
    def __init__(self, room_id: str, broadcaster: Broadcaster, *, mode: str = "relay") -> None:
        self.room_id = room_id
        self.session_id = relay_session_id(room_id)
        self._broadcaster = broadcaster
        self.mode = mode
        self.edits = 0

    def accept(self, sender: str, edit: CanvasEdit) -> list[WireAction]:
        """Validate an edit into actions; raises ValueError with the reason to refuse it."""
        if self.mode != "relay":
            raise ValueError("host mode: the app syncs user edits itself")
        return edit_to_actions(edit, sender)

    async def send(self, sender: str, actions: list[WireAction]) -> None:
        if not actions:
            return
        self.edits += 1
        await self._broadcaster.send(self.session_id, actions)
        log.debug("edit_relayed", room=self.room_id, participant=sender, actions=len(actions))
