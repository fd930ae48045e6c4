"""The envelope broadcaster: seq, outbox, ack tracking, retransmits and resyncs per room.

- Each session's envelopes carry a strictly increasing seq (a session that already has rows
  in the outbox, like the room's relay session after a restart, continues after them).
- Every envelope is written to the outbox before it is published, so nothing is lost.
- Publishing never waits for acks. A separate loop retransmits an unacked envelope only to the
  participants that have not acked it, a bounded number of times; after that the participant
  is resynced from the outbox; a participant that still does not answer is given up on (it
  can ask for a resync itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.protocol.messages import Ack, ActionEnvelope, WireAction
from steward.protocol.names import TOPIC_ACTION
from steward.room.envelopes import pack
from steward.room.replica import Replica
from steward.store.outbox import AckRow, Outbox, OutboxRow

log = get_logger(__name__)

# Outbox replays to one participant for one session before giving up on it.
MAX_RESYNCS = 3
ACK_FLUSH_S = 0.1


class Publisher(Protocol):
    async def __call__(self, payload: bytes, *, topic: str, destinations: list[str]) -> None: ...


@dataclass
class StreamStats:
    """Per-session delivery figures (for the session's end-of-run log line)."""

    envelopes: int = 0
    actions: int = 0
    retransmits: int = 0
    resyncs: int = 0
    last_seq: int = 0
    acks: Counter[str] = field(default_factory=Counter)
    first_envelope_at: float | None = None
    first_applied_at: float | None = None


@dataclass
class _Pending:
    payload: bytes
    last_sent: float
    attempts: int = 0


class Broadcaster:
    def __init__(
        self,
        room_id: str,
        publish: Publisher,
        outbox: Outbox,
        recipients: Callable[[], list[str]],
        *,
        retransmit_after_s: float = 0.4,
        retransmit_attempts: int = 3,
        mirror: Replica | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.room_id = room_id
        self._publish = publish
        self.outbox = outbox
        self._recipients = recipients
        self.retransmit_after_s = retransmit_after_s
        self.retransmit_attempts = retransmit_attempts
        self.mirror = mirror if mirror is not None else Replica()
        self._clock = clock
        self._lock = asyncio.Lock()
        self._room_order = 0
        self._seq: dict[str, int] = {}
        self._stats: dict[str, StreamStats] = {}
        # participant -> (session_id, seq) -> pending envelope
        self._pending: dict[str, dict[tuple[str, int], _Pending]] = {}
        self._resyncs: Counter[tuple[str, str]] = Counter()
        self._ack_rows: list[AckRow] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []

    # --- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        self._room_order = await self.outbox.max_room_order(self.room_id)
        self._loops = [
            asyncio.create_task(self._retransmit_loop(), name=f"retransmit:{self.room_id}"),
            asyncio.create_task(self._ack_flush_loop(), name=f"acks:{self.room_id}"),
        ]

    async def close(self) -> None:
        for task in self._loops:
            task.cancel()
        for task in self._loops:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._flush_acks()
        for t in list(self._tasks):
            t.cancel()

    # --- sending -------------------------------------------------------------------------
    def stats(self, session_id: str) -> StreamStats:
        return self._stats.setdefault(session_id, StreamStats())

    async def send(
        self, session_id: str, actions: list[WireAction], *, partial: bool = False
    ) -> int:
        """Sequence, persist and publish; returns the last seq. Never waits for acks."""
        if not actions:
            return self._seq.get(session_id, 0)
        # Shielded: a caller cancelled between the outbox INSERT and the seq bookkeeping
        # would make the next send (e.g. the agent's revert) reuse a persisted seq.
        return await asyncio.shield(self._send(session_id, actions, partial))

    async def _send(self, session_id: str, actions: list[WireAction], partial: bool) -> int:
        async with self._lock:
            if session_id not in self._seq:
                self._seq[session_id] = await self.outbox.max_seq(session_id)
            for action in actions:
                self.mirror.apply(session_id, action, partial=partial)
            stats = self.stats(session_id)
            for group in pack(session_id, actions, partial=partial):
                seq = self._seq[session_id] + 1
                envelope = ActionEnvelope(
                    session_id=session_id,
                    seq=seq,
                    partial=partial or None,
                    actions=group,
                    ts=time.time(),
                )
                payload = envelope.to_wire()
                self._room_order += 1
                await self.outbox.append(
                    self.room_id, session_id, seq, self._room_order, partial, payload.decode()
                )
                self._seq[session_id] = seq
                stats.envelopes += 1
                stats.actions += len(group)
                stats.last_seq = seq
                if stats.first_envelope_at is None:
                    stats.first_envelope_at = self._clock()
                await self._send_tracked(session_id, seq, payload, self._recipients(), "live")
            return self._seq[session_id]

    async def _send_tracked(
        self, session_id: str, seq: int, payload: bytes, destinations: list[str], kind: str
    ) -> None:
        if not destinations:
            return
        now = self._clock()
        for identity in destinations:
            self._pending.setdefault(identity, {})[(session_id, seq)] = _Pending(payload, now)
        await self._safe_publish(payload, destinations, kind)

    async def _safe_publish(self, payload: bytes, destinations: list[str], kind: str) -> None:
        try:
            await self._publish(payload, topic=TOPIC_ACTION, destinations=destinations)
            metrics.ENVELOPES.labels(kind=kind).inc()
        except Exception as err:  # the pending entry stays; the retransmit loop tries again
            log.warning("publish_failed", room=self.room_id, kind=kind, error=str(err))

    # --- acks ----------------------------------------------------------------------------
    def on_ack(self, participant: str, ack: Ack) -> None:
        pending = self._pending.get(participant)
        if pending is not None:
            pending.pop((ack.session_id, ack.seq), None)
        stats = self._stats.get(ack.session_id)
        if stats is not None:
            stats.acks[participant] += 1
            if stats.first_applied_at is None:
                stats.first_applied_at = self._clock()
        self._resyncs.pop((participant, ack.session_id), None)
        metrics.ACKS.inc()
        self._ack_rows.append(
            AckRow(ack.session_id, ack.seq, participant, json.dumps(ack.applied), ack.applied_at)
        )

    def unacked(self, participant: str) -> int:
        return len(self._pending.get(participant, {}))

    def total_unacked(self) -> int:
        return sum(len(p) for p in self._pending.values())

    def forget(self, participant: str) -> None:
        """The participant left: stop retransmitting to it."""
        self._pending.pop(participant, None)
        for key in [k for k in self._resyncs if k[0] == participant]:
            del self._resyncs[key]

    # --- resync --------------------------------------------------------------------------
    async def resync(self, participant: str, session_id: str, last_seq: int) -> int:
        """Replay one session after `last_seq` to one participant; returns envelopes sent."""
        rows = await self.outbox.session_after(self.room_id, session_id, last_seq)
        return await self._replay(participant, rows, "requested")

    async def resync_room(self, participant: str, *, skip_acked: bool) -> int:
        """Replay the room's history in room order (late joiners, full reconnects)."""
        await self._flush_acks()
        rows = await self.outbox.room_history(
            self.room_id, skip_acked_by=participant if skip_acked else ""
        )
        return await self._replay(participant, rows, "room")

    async def _replay(self, participant: str, rows: list[OutboxRow], reason: str) -> int:
        for row in rows:
            payload = ActionEnvelope.model_validate_json(row.payload).to_wire()
            await self._send_tracked(row.session_id, row.seq, payload, [participant], "replay")
        if rows:
            metrics.RESYNCS.labels(reason=reason).inc()
            log.info("resynced", room=self.room_id, participant=participant, envelopes=len(rows))
        return len(rows)

    # --- loops ---------------------------------------------------------------------------
    async def _retransmit_loop(self) -> None:
        tick = max(0.02, self.retransmit_after_s / 4)
        while True:
            await asyncio.sleep(tick)
            try:
                await self._retransmit_due()
            except Exception:
                log.exception("retransmit_failed", room=self.room_id)

    async def _retransmit_due(self) -> None:
        now = self._clock()
        due: dict[tuple[str, int], list[str]] = {}
        payloads: dict[tuple[str, int], bytes] = {}
        exhausted: dict[tuple[str, str], int] = {}
        for participant, entries in self._pending.items():
            for key, p in entries.items():
                # Linear backoff: each attempt waits one period longer.
                if now - p.last_sent < self.retransmit_after_s * (p.attempts + 1):
                    continue
                if p.attempts < self.retransmit_attempts:
                    p.attempts += 1
                    p.last_sent = now
                    due.setdefault(key, []).append(participant)
                    payloads[key] = p.payload
                else:
                    k = (participant, key[0])
                    exhausted[k] = min(exhausted.get(k, key[1]), key[1])
        for key, lagging in sorted(due.items(), key=lambda kv: kv[0][1]):
            stats = self._stats.get(key[0])
            if stats is not None:
                stats.retransmits += len(lagging)
            metrics.RETRANSMITS.inc(len(lagging))
            await self._safe_publish(payloads[key], lagging, "retransmit")
        for (participant, session_id), first_missing in exhausted.items():
            await self._resync_lagging(participant, session_id, first_missing)

    async def _resync_lagging(self, participant: str, session_id: str, first_missing: int) -> None:
        self._resyncs[(participant, session_id)] += 1
        entries = self._pending.get(participant, {})
        if self._resyncs[(participant, session_id)] > MAX_RESYNCS:
            for key in [k for k in entries if k[0] == session_id]:
                del entries[key]
            log.warning(
                "participant_unresponsive",
                room=self.room_id,
                participant=participant,
                session_id=session_id,
            )
            return
        stats = self._stats.get(session_id)
        if stats is not None:
            stats.resyncs += 1
        log.info(
            "resync_lagging",
            room=self.room_id,
            participant=participant,
            session_id=session_id,
            from_seq=first_missing,
        )
        rows = await self.outbox.session_after(self.room_id, session_id, first_missing - 1)
        metrics.RESYNCS.labels(reason="lagging").inc()
        for row in rows:
            payload = ActionEnvelope.model_validate_json(row.payload).to_wire()
            # Only envelopes still unacked by this participant go again.
            if (session_id, row.seq) in entries:
                await self._send_tracked(session_id, row.seq, payload, [participant], "replay")

    async def _ack_flush_loop(self) -> None:
        while True:
            await asyncio.sleep(ACK_FLUSH_S)
            try:
                await self._flush_acks()
            except Exception:
                log.exception("ack_flush_failed", room=self.room_id)

    async def _flush_acks(self) -> None:
        rows, self._ack_rows = self._ack_rows, []
        await self.outbox.record_acks(rows)
