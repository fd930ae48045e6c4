"""The one-shotting fairies: one per asker, in `one-shotting` mode, on the fairy runtime.

A one-shot prompt (not for the room's crew) is answered by its asker's one-shotting fairy:
its state is a `FairyState` of the room's `RoomFairies` (history, todo list, lent session),
and its history is written through `RoomRecords` like every fairy's, in the response format.
It is kept off the roster (`room_fairies.ONE_SHOT_PREFIX`): it has no presence, is never
part of the crew, and cannot be directed. A prompt is a request queued to that fairy with the
prompt's session lent to it (`one_shot_job`), run by its worker like any fairy's request;
each asker's fairy has its own worker, so two askers' prompts run at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from steward.actions.registry import Outcome
from steward.fairies.memory import (
    HistoryItem,
    MemoryLevel,
    action_item,
    canvas_changes,
    prompt_item,
    run_end_item,
)
from steward.fairies.room_fairies import FairyState, RoomFairies, one_shot_id
from steward.fairies.room_records import RoomRecords
from steward.obs.logging import get_logger
from steward.ports import SessionPort

log = get_logger(__name__)

# Not kept as applied actions: thoughts are shown as they stream; a message is kept by the
# turn's `said` hook, with its final text.
_UNRECORDED = frozenset({"think", "message"})


def one_shot_fairy(room: RoomFairies, asker: str) -> FairyState:
    """`asker`'s one-shotting fairy in the room (made on first use)."""
    state = room.fairy(one_shot_id(asker))
    state.asker = asker
    return state


class OneShotRecorder:
    """Keeps one run's request, messages and actions in its fairy's history (memory now,
    Postgres at `flush`: the turn's `said` hook cannot wait on a write)."""

    def __init__(
        self, records: RoomRecords, room: RoomFairies, state: FairyState, level: MemoryLevel
    ) -> None:
        self.records = records
        self.room = room
        self.state = state
        self.level = level
        self._unsaved: list[HistoryItem] = []

    def _keep(self, item: HistoryItem) -> None:
        self.state.history.append(item)
        self._unsaved.append(item)

    def request(self, text: str, session: SessionPort) -> None:
        item = prompt_item(text, self.level, "user", self.state.asker)
        self._keep(replace(item, run=session.session_id))

    def hooks(
        self, session: SessionPort
    ) -> tuple[Callable[[str], None], Callable[[Outcome], Awaitable[None]]]:
        """Turn hooks (`said`, `applied`) recording into the fairy's history."""
        run = session.session_id

        def said(text: str) -> None:
            self._action("message", {"text": text}, run)

        async def applied(out: Outcome) -> None:
            if out.name not in _UNRECORDED:
                self._action(out.name, dict(out.data), run)

        return said, applied

    def ended(self, how: str, session: SessionPort) -> None:
        """Keep how the run ended without its answer ("timed out", …) for later requests."""
        run = session.session_id
        changes = canvas_changes(i for i in self.state.history if i.run == run)
        self._keep(run_end_item(self.state.asker, how, changes, self.level, run))

    def _action(self, name: str, params: dict[str, Any], run: str) -> None:
        self._keep(replace(action_item(name, params, self.level), run=run))

    async def flush(self) -> None:
        """Write what this run added to the fairy's history since the last flush."""
        unsaved, self._unsaved = self._unsaved, []
        try:
            await self.records.save_history(self.room, self.state.fairy_id, unsaved)
        except Exception:
            # The run goes on (its history is in memory); the next flush tries these again.
            log.exception("one_shot_history_write_failed", room=self.room.room_id)
            self._unsaved[:0] = unsaved
