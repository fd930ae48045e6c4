"""Ack rows on their way to the outbox: one INSERT per flush, at most every `ACK_FLUSH_S`.

Acks only spare replays (a late joiner's replay skips what a row says was applied), so rows
that Postgres refuses are kept for the next flush, bounded (`MAX_ACK_ROWS_KEPT`, oldest
dropped first). An idle room runs no timer: the loop sleeps until an ack arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from steward.obs.logging import get_logger
from steward.store.outbox import TRANSIENT, AckRow, Outbox

log = get_logger(__name__)

ACK_FLUSH_S = 0.1
# Ack rows waiting for Postgres; acks only spare replays, so a long outage may drop some.
MAX_ACK_ROWS_KEPT = 50_000


class AckWriter:
    """Buffers ack rows and writes them to the outbox in one INSERT per flush."""

    def __init__(self, room_id: str, outbox: Outbox) -> None:
        self.room_id = room_id
        self._outbox = outbox
        self._rows: list[AckRow] = []
        self._added = asyncio.Event()

    def add(self, rows: Iterable[AckRow]) -> None:
        self._rows.extend(rows)
        self._added.set()

    @property
    def unflushed(self) -> int:
        """Ack rows received and not yet written to the outbox."""
        return len(self._rows)

    async def flush(self) -> None:
        """Write the rows received since the last flush; on failure keep them and raise."""
        rows, self._rows = self._rows, []
        try:
            await self._outbox.record_acks(rows)
        except Exception:
            # Kept for the next flush (Postgres restarting); bounded, oldest dropped first.
            self._rows = (rows + self._rows)[-MAX_ACK_ROWS_KEPT:]
            self._added.set()
            raise

    async def run(self) -> None:
        """Flush whenever rows came, the acks of the next `ACK_FLUSH_S` joining the INSERT."""
        while True:
            await self._added.wait()
            await asyncio.sleep(ACK_FLUSH_S)
            self._added.clear()
            try:
                await self.flush()
            except TRANSIENT as err:  # Postgres restarting: the rows wait for the next flush
                log.warning("ack_flush_deferred", room=self.room_id, error=str(err))
            except Exception:
                log.exception("ack_flush_failed", room=self.room_id)
