"""The envelope broadcaster: seq, outbox, ack tracking, retransmits and resyncs per room.

It composes the primitives of `steward.room.outbound.delivery` (each module there says its rule):

- Each session's envelopes carry a strictly increasing seq (`Sequencer`).
- Every envelope is written to the outbox before it is published, so nothing is lost. A send
  numbers, encodes (once, for every recipient and retransmit) and applies its envelopes to the
  mirror at once and queues them (`FlushQueue`); the room's flush takes everything queued,
  writes it in ONE multi-row INSERT (the lease fence checked once) and hands it to LiveKit in
  as few packets as fit (`agent:actions` batches up to `MAX_BATCH_BYTES`). Retransmits and
  replays go in batches too.
- A preview is not sent while the action's previous one is unacked or within the preview
  interval of it (`PreviewPacer`); finals are always sent. Skipped previews take no seq.
- Publishing never waits for acks, nor for LiveKit's completion of the previous packet: each
  packet is handed over in seq order and its completion watched in the background
  (`InFlight` bounds how many); its retransmit timer starts when LiveKit has sent it.
- A separate loop retransmits an unacked envelope only to the participants that have not
  acked it, paced by each one's ack clock (`AckClock`, Karn), within a budget per pass;
  after the last retransmit it resyncs that participant once from the outbox, and gives up on
  one silent for too long (`retransmit_plan`).
- A participant sent a replay that has acked nothing since gets no other replay and no
  retransmits but those of that replay until it acks (`ResyncGate`): a never-acking peer
  costs one replay, not one per request.
- An ack is taken only for an envelope that was sent to its sender (`AckTracker`: refused,
  counted, never written otherwise); ack rows are written in one INSERT per flush
  (`AckWriter`).
- An idle room runs no timer: the retransmit loop sleeps until something is pending, the ack
  flush until an ack arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from steward.canvas.mirror import CanvasMirror
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.obs.stage_hooks import Stage, StageHooks
from steward.protocol.messages import Ack, ActionEnvelope, WireAction
from steward.protocol.names import TOPIC_ACTION, TOPIC_ACTIONS
from steward.room.outbound.delivery.ack_tracker import AckTracker, Key, Pending
from steward.room.outbound.delivery.ack_writer import AckWriter
from steward.room.outbound.delivery.flush_queue import FlushQueue, Queued
from steward.room.outbound.delivery.in_flight import InFlight
from steward.room.outbound.delivery.preview_pacer import PREVIEW_INTERVAL_S, PreviewPacer
from steward.room.outbound.delivery.resync_gate import ResyncGate
from steward.room.outbound.delivery.retransmit_plan import GIVE_UP_S, GiveUp, plan_retransmits
from steward.room.outbound.delivery.sequencer import Sequencer
from steward.room.outbound.delivery.stats import FlushStats, StreamStats
from steward.room.outbound.envelopes import frames, pack
from steward.store.outbox import AckRow, Outbox, OutboxRow
from steward.task_set import TaskSet

log = get_logger(__name__)

CLOSE_FLUSH_S = 5.0
# Envelopes queued for the flush beyond which a non-waiting send waits for it (backpressure).
MAX_QUEUED = 256


class Publisher(Protocol):
    """Hands a packet to LiveKit when called (so calls keep their order) and returns an
    awaitable for its completion, which the caller may await later."""

    def __call__(
        self, payload: bytes, *, topic: str, destinations: list[str]
    ) -> Awaitable[None]: ...


class Broadcaster:
    """Sends a room's envelopes: numbers them, writes them to the outbox, tracks acks, retransmits
    and resyncs."""

    def __init__(
        self,
        room_id: str,
        publish: Publisher,
        outbox: Outbox,
        recipients: Callable[[], list[str]],
        *,
        retransmit_after_s: float = 0.4,
        retransmit_attempts: int = 3,
        mirror: CanvasMirror | None = None,
        clock: Callable[[], float] = time.monotonic,
        fence: int | None = None,
        preview_interval_s: float = PREVIEW_INTERVAL_S,
    ) -> None:
        self.room_id = room_id
        # The room lease's token: every append carries it, so a lost lease publishes nothing.
        self.fence = fence
        self._publish = publish
        self.outbox = outbox
        self._recipients = recipients
        self.retransmit_after_s = retransmit_after_s
        self.retransmit_attempts = retransmit_attempts
        self.mirror = mirror if mirror is not None else CanvasMirror()
        self._clock = clock
        self._stats: dict[str, StreamStats] = {}
        self._tasks = TaskSet("broadcast_task_failed", room=room_id)
        self._sequencer = Sequencer(outbox)
        self._pacer = PreviewPacer(preview_interval_s, clock)
        self._queue = FlushQueue(self._persist, self._hand_over, self._unsent, self._tasks.spawn)
        self._acks = AckTracker()
        # A host that left (host mode) with envelopes unacked, until the next host takes them.
        self._orphaned: dict[str, dict[Key, Pending]] = {}
        self._ack_writer = AckWriter(room_id, outbox)
        self._in_flight = InFlight()
        # session → highest seq handed to LiveKit.
        self._handed: dict[str, int] = {}
        self.flush_stats = FlushStats()
        self.hooks = StageHooks()
        self._loops: list[asyncio.Task[None]] = []
        self.gate = ResyncGate()

    @property
    def preview_interval_s(self) -> float:
        return self._pacer.interval_s

    @preview_interval_s.setter
    def preview_interval_s(self, value: float) -> None:
        self._pacer.interval_s = value

    # --- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        await self._sequencer.start(self.room_id)
        self._loops = [
            asyncio.create_task(self._retransmit_loop(), name=f"retransmit:{self.room_id}"),
            asyncio.create_task(self._ack_writer.run(), name=f"acks:{self.room_id}"),
        ]

    @property
    def room_order(self) -> int:
        """The room-wide order of the last envelope handed over (rebuilt from the outbox)."""
        return self._sequencer.room_order

    async def close(self) -> None:
        await self._queue.drain(CLOSE_FLUSH_S)  # what was queued is persisted and handed over
        for task in self._loops:
            task.cancel()
        for task in self._loops:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.flush_acks()
        self._tasks.cancel()

    # --- sending -------------------------------------------------------------------------
    def all_stats(self) -> list[StreamStats]:
        """Every session's stream counters, in the order the sessions began."""
        return list(self._stats.values())

    def stats(self, session_id: str) -> StreamStats:
        return self._stats.setdefault(session_id, StreamStats())

    async def send(
        self,
        session_id: str,
        actions: list[WireAction],
        *,
        partial: bool = False,
        wait: bool = True,
    ) -> int:
        """Sequence, persist and publish; returns the last seq. Never waits for acks.

        The envelopes are numbered, encoded and applied to the mirror at once, then queued
        for the room's flush, which persists everything queued in one INSERT and hands it to
        LiveKit in as few packets as fit. `wait` (the default) returns once that is done;
        `wait=False` returns at once, so sends made in the same loop turn share one flush
        (a failure is then raised by the session's next `send` or `flush`)."""
        seq = await self._sequencer.last(session_id)
        self._queue.raise_failed(session_id)
        if not actions:
            return seq
        if partial:
            held = self._pacer.held(session_id, actions, lambda s: self._delivered((session_id, s)))
            if held is not None:
                stats = self.stats(session_id)
                stats.previews_coalesced += 1
                stats.previews_paced += held == "paced"
                return seq
        last = self._number(session_id, actions, partial)
        if wait or len(self._queue) >= MAX_QUEUED:
            await self._queue.flushed(last)
        return last.seq

    async def flush(self, session_id: str) -> None:
        """Wait until everything queued so far is persisted and handed to LiveKit; raises
        what a flush of the session's envelopes failed with since its last send."""
        if self._queue.tail is not None:
            await self._queue.flushed(self._queue.tail)
        self._queue.raise_failed(session_id)

    def _delivered(self, key: Key) -> bool:
        """Handed to LiveKit and acked by everyone it went to."""
        return key[1] <= self._handed.get(key[0], 0) and not self._acks.pending_anywhere(key)

    def _number(self, session_id: str, actions: list[WireAction], partial: bool) -> Queued:
        """Apply to the mirror, number, encode and queue every envelope of one send."""
        self.mirror.apply(actions, partial=partial, session=session_id)
        last: Queued | None = None
        for group in pack(session_id, actions, partial=partial):
            seq, room_order = self._sequencer.next(session_id)
            self._pacer.numbered(session_id, group, seq, partial=partial)
            envelope = ActionEnvelope(
                session_id=session_id,
                seq=seq,
                partial=partial or None,
                actions=group,
                ts=time.time(),
            )
            last = Queued(session_id, seq, room_order, partial, envelope.to_wire(), len(group))
            self._queue.put(last)
        assert last is not None  # pack returns at least one group
        return last

    async def _persist(self, chunk: list[Queued]) -> None:
        """One INSERT for the whole chunk, fenced once."""
        await self.outbox.append_many(self.room_id, [q.row() for q in chunk], fence=self.fence)
        now = self._clock()
        for q in chunk:
            stats = self.stats(q.session_id)
            stats.envelopes += 1
            stats.actions += q.actions
            stats.last_seq = q.seq
            if stats.first_envelope_at is None:
                stats.first_envelope_at = now
        self.flush_stats.inserts += 1

    async def _hand_over(self, chunk: list[Queued]) -> None:
        payloads = [q.payload for q in chunk]
        for start, end, frame in frames(payloads):
            await self._in_flight.room_for_one_more()
            sent = chunk[start:end]
            keys = [(q.session_id, q.seq, q.payload) for q in sent]
            # Not awaited: the next packet is handed to LiveKit without waiting for this
            # one's native round trip (the call order is the send order).
            self._issue_tracked(keys, frame, self._recipients(), "live")
            self.flush_stats.packets += 1
            self.flush_stats.envelopes += len(sent)
            for q in sent:
                self._handed[q.session_id] = q.seq

    def _unsent(self, failed: list[Queued], err: BaseException) -> None:
        """Nothing of `failed` was persisted: their sessions renumber from the outbox and
        their previews are forgotten (the flush queue hands the error to their senders)."""
        log.warning("send_failed", room=self.room_id, envelopes=len(failed), error=str(err))
        for session_id in {q.session_id for q in failed}:
            self._sequencer.renumber(session_id)
        self._pacer.unsent({q.session_id: q.seq for q in reversed(failed)})

    async def last_seq(self, session_id: str) -> int:
        """The session's highest seq sent (0 before any), from the outbox if not ours; what
        is queued is flushed first."""
        if self._queue.tail is not None:
            with contextlib.suppress(Exception):  # a failed flush renumbers the session
                await self._queue.flushed(self._queue.tail)
        return await self._sequencer.last(session_id)

    def new_session(self, session_id: str) -> None:
        """A session id just minted here: it has no outbox rows, so its first send reads
        none (that read was a round trip before the first envelope of every session)."""
        self._sequencer.new_session(session_id)

    # --- packets -------------------------------------------------------------------------
    def _issue_tracked(
        self,
        envelopes: Sequence[tuple[str, int, bytes]],
        frame: bytes,
        destinations: list[str],
        kind: str,
    ) -> asyncio.Task[None] | None:
        """Issue one packet carrying `envelopes` (session, seq, own payload) now; the
        returned task settles the send (timers start when it left)."""
        if not destinations:
            return None
        now = self._clock()
        entries = [
            self._acks.track(identity, (session_id, seq), payload, now, replay=kind == "replay")
            for identity in destinations
            for session_id, seq, payload in envelopes
        ]
        done = self._issue(frame, len(envelopes), destinations, kind)
        task = self._tasks.spawn(self._settle(done, kind, len(envelopes), entries))
        if kind == "live":
            self._in_flight.add(task)
        return task

    def _issue(
        self, frame: bytes, count: int, destinations: list[str], kind: str
    ) -> Awaitable[None] | None:
        topic = TOPIC_ACTION if count == 1 else TOPIC_ACTIONS
        self.hooks.report(
            Stage.PUBLISH_ISSUED, payload=frame, topic=topic, destinations=destinations
        )
        try:
            done = self._publish(frame, topic=topic, destinations=destinations)
            return self.hooks.timed(Stage.PUBLISH_COMPLETED, done)
        except Exception as err:  # the pending entry stays; the retransmit loop tries again
            log.warning("publish_failed", room=self.room_id, kind=kind, error=str(err))
            return None

    async def _settle(
        self,
        done: Awaitable[None] | None,
        kind: str,
        count: int,
        entries: Sequence[Pending] = (),
    ) -> None:
        try:
            if done is not None:
                await done
                metrics.ENVELOPES.labels(kind=kind).inc(count)
        except Exception as err:  # the pending entry stays; the retransmit loop tries again
            log.warning("publish_failed", room=self.room_id, kind=kind, error=str(err))
        finally:
            now = self._clock()
            for entry in entries:
                entry.sent, entry.last_sent, entry.first_sent = True, now, now

    async def _publish_frames(
        self,
        payloads: list[bytes],
        destinations: list[str],
        kind: str,
        track: Sequence[Key] | None = None,
    ) -> None:
        """Envelopes to `destinations` in as few packets as fit, each awaited; `track`
        (session, seq per payload) makes them pending, retransmitted until acked."""
        for start, end, frame in frames(payloads):
            if track is not None:
                keys = [(*track[i], payloads[i]) for i in range(start, end)]
                task = self._issue_tracked(keys, frame, destinations, kind)
                if task is not None:
                    await task
                continue
            done = self._issue(frame, end - start, destinations, kind)
            if done is not None:
                await self._settle(done, kind, end - start)

    # --- acks ----------------------------------------------------------------------------
    def on_ack(self, participant: str, ack: Ack) -> str | None:
        """Take an ack; returns why it was dropped (never sent to them), or None."""
        reason = self._acks.refusal(participant, ack)
        if reason is not None:
            metrics.ACKS_DROPPED.labels(reason=reason).inc()
            return reason
        covered = self._acks.take(participant, ack, self._clock())
        stats = self._stats.get(ack.session_id)
        if stats is not None:
            stats.acks[participant] += len(covered)
            if stats.first_applied_at is None:
                stats.first_applied_at = self._clock()
        metrics.ACKS.inc()
        self.flush_stats.acks += 1
        # A row per envelope (late joiners' replays skip what a row says was applied); the
        # ids the ack lists go with its own seq.
        self._ack_writer.add(
            [AckRow(s, q, participant, "[]", ack.applied_at) for s, q in covered[:-1]]
            + [
                AckRow(
                    ack.session_id, ack.seq, participant, json.dumps(ack.applied), ack.applied_at
                )
            ]
        )
        self.gate.acked(participant)
        return None

    def unacked(self, participant: str) -> int:
        return self._acks.unacked(participant)

    def unacked_in(self, session_id: str) -> int:
        """Envelope copies of the session some participant has not acked yet."""
        return self._acks.unacked_in(session_id)

    def total_unacked(self) -> int:
        return self._acks.total()

    def forget(self, participant: str, *, keep_unacked: bool = False) -> None:
        """The participant left: stop retransmitting to it. `keep_unacked` (a leaving host in
        host mode) keeps what it never acked for `hand_over` to the next host."""
        unacked = self._acks.forget(participant)
        if keep_unacked and unacked:
            self._orphaned = {participant: unacked}
        self.gate.forget(participant)

    def hand_over(self, old: str, new: str) -> int:
        """Host mode: the envelopes `old` was sent and never acked go to `new` now, in the
        order they were first sent, before any later live send (this runs synchronously in
        the host change). The new host's canvas holds what the old host applied, through the
        app's own sync; returns the envelopes handed over."""
        # Still here (demoted): its copies move; gone: what it left behind.
        entries = self._acks.forget(old) if self._acks.of(old) else self._orphaned.get(old, {})
        self._orphaned.clear()
        keys = [(sid, seq, p.payload) for (sid, seq), p in entries.items()]
        for start, end, frame in frames([payload for _, _, payload in keys]):
            self._issue_tracked(keys[start:end], frame, [new], "handover")
        if keys:
            log.info("host_handover", room=self.room_id, old=old, new=new, envelopes=len(keys))
        return len(keys)

    @property
    def acks_unflushed(self) -> int:
        """Acks received and not yet written to the outbox."""
        return self._ack_writer.unflushed

    async def flush_acks(self) -> None:
        """Write the acks received since the last flush to the outbox."""
        await self._ack_writer.flush()

    # --- resync --------------------------------------------------------------------------
    async def resync(self, participant: str, session_id: str, last_seq: int) -> int:
        """Replay one session after `last_seq` to one participant; returns envelopes sent."""
        if self._withheld(participant, "requested"):
            return 0
        rows = await self.outbox.session_after(self.room_id, session_id, last_seq)
        if rows:
            self.stats(session_id).resyncs += 1
        return await self._replay(participant, rows, "requested")

    async def resync_room(
        self, participant: str, *, skip_acked: bool, shared_document: bool = False
    ) -> int:
        """Replay the room's history in room order (late joiners, full reconnects). A
        `shared_document` (host mode) already holds what any host applied: only the rest."""
        if self._withheld(participant, "room"):
            return 0
        await self.flush_acks()
        rows = await self.outbox.room_history(
            self.room_id,
            skip_acked_by=participant if skip_acked else "",
            skip_acked_by_anyone=shared_document,
        )
        return await self._replay(participant, rows, "room")

    def _withheld(self, participant: str, reason: str) -> bool:
        if not self.gate.owes_ack(participant):
            return False
        self.gate.refused += 1
        metrics.RESYNCS.labels(reason="withheld").inc()
        log.info("resync_withheld", room=self.room_id, participant=participant, reason=reason)
        return True

    async def _replay(
        self, participant: str, rows: list[OutboxRow], reason: str, *, track: bool = True
    ) -> int:
        """Send outbox rows to one participant; `track=False` when they must not be
        retransmitted again (the replay after exhausted retransmits)."""
        payloads = [ActionEnvelope.model_validate_json(row.payload).to_wire() for row in rows]
        keys = [(row.session_id, row.seq) for row in rows]
        if not track:
            for session_id, seq in keys:
                self._acks.mark_sent(participant, session_id, seq)
        await self._publish_frames(payloads, [participant], "replay", keys if track else None)
        if rows:
            self.gate.replayed(participant, keys)
            metrics.RESYNCS.labels(reason=reason).inc()
            log.info(
                "resynced",
                room=self.room_id,
                participant=participant,
                reason=reason,
                envelopes=len(rows),
                from_seq=rows[0].seq,
            )
        return len(rows)

    # --- retransmits ---------------------------------------------------------------------
    async def _retransmit_loop(self) -> None:
        tick = max(0.02, self.retransmit_after_s / 4)
        while True:
            if not self._acks.any_pending():  # nothing can come due until a send
                self._acks.added.clear()
                await self._acks.added.wait()
            await asyncio.sleep(tick)
            try:
                await self.retransmit_due()
            except Exception:
                log.exception("retransmit_failed", room=self.room_id)

    async def retransmit_due(self) -> None:
        """One pass of the retransmit loop: resend what is due, resync or give up on the rest."""
        now = self._clock()
        plan = plan_retransmits(
            self._acks,
            now,
            floor_s=self.retransmit_after_s,
            attempts=self.retransmit_attempts,
            owes_ack=self.gate.owes_ack,
        )
        for gave_up in plan.gave_up:
            self._give_up(gave_up)
        for key, lagging in plan.due.items():
            stats = self._stats.get(key[0])
            if stats is not None:
                stats.retransmits += len(lagging)
            metrics.RETRANSMITS.inc(len(lagging))
        for lagging_set, keys in plan.groups().items():
            batch = [plan.payloads[key] for key in keys]
            await self._publish_frames(batch, list(lagging_set), "retransmit")
        for (participant, session_id), first_seq in plan.resyncs.items():
            await self._resync_exhausted(participant, session_id, first_seq, now)

    async def _resync_exhausted(
        self, participant: str, session_id: str, first_seq: int, now: float
    ) -> None:
        """Retransmits ran out: replay the session from the outbox once, from `first_seq`."""
        entries = [p for k, p in self._acks.of(participant).items() if k[0] == session_id]
        try:
            rows = await self.outbox.session_after(self.room_id, session_id, first_seq - 1)
        except Exception as err:  # Postgres away: the entries stay due, tried next tick
            log.warning("resync_failed", room=self.room_id, participant=participant, error=str(err))
            return
        for p in entries:
            p.attempts = self.retransmit_attempts + 1
            p.last_sent = now
        await self._replay(participant, rows, "unacked", track=False)
        self.stats(session_id).resyncs += 1

    def _give_up(self, gave_up: GiveUp) -> None:
        """Acked nothing for GIVE_UP_S while envelopes waited: stopped; it resyncs on return."""
        log.warning(
            "participant_unresponsive",
            room=self.room_id,
            participant=gave_up.participant,
            unacked=gave_up.unacked,
            sessions=gave_up.sessions,
            silent_s=GIVE_UP_S,
        )
