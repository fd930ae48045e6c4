"""The envelope broadcaster: seq, outbox, ack tracking, retransmits and resyncs per room.

- Each session's envelopes carry a strictly increasing seq (a session that already has rows
  in the outbox, like the room's relay session after a restart, continues after them).
- Every envelope is written to the outbox before it is published, so nothing is lost.
- A send numbers, encodes (once, for every recipient and retransmit) and applies its
  envelopes to the mirror at once and queues them; the room's flush task takes everything
  queued, writes it in ONE multi-row INSERT (the lease fence checked once) and hands it to
  LiveKit in as few packets as fit (`agent:actions` batches up to `MAX_BATCH_BYTES`). Sends
  made while a flush runs, or in the same loop turn, make the next one. Retransmits and
  replays go in batches too.
- A partial envelope (a preview, superseded by the action's next version) is not sent while
  the action's previous preview is still unacked by some participant (under load a room
  sends fewer previews, clocked by its clients' acks), nor within `preview_interval_s` of
  it (an action's shape updates at most that often while it streams; its first preview is
  never held). Finals are always sent, so every canvas ends the same. Skipped previews take
  no seq (the stream has no gaps).
- Publishing never waits for acks, nor for LiveKit's completion of the previous packet: each
  packet is handed over in seq order and its completion is watched in the background (at
  most `MAX_IN_FLIGHT` per room); its retransmit timer starts when LiveKit has sent it.
- A separate loop retransmits an unacked envelope only to the participants that have not
  acked it. The wait adapts to each participant's measured ack
  round trip and doubles with every attempt (up to `MAX_BACKOFF_S`); after a retransmit it
  stays doubled for that participant's next envelopes until one is acked without a
  retransmit (Karn), so acks that merely lag are not answered with resends; each tick sends at
  most `RETRANSMIT_BUDGET` envelopes per room, so an overloaded room is not buried under
  its own retransmits and first sends never queue behind them.
- Retransmits are bounded: after `retransmit_attempts` of them, the participant is resynced
  once from the outbox for that session (everything after its oldest unacked seq), and those
  envelopes are not retransmitted again: a browser still missing something asks with
  `steward:resync` itself. A participant that acked nothing for `GIVE_UP_S` since its
  oldest unacked envelope was first sent is logged and dropped (it resyncs itself when it
  comes back); time spent idle with nothing to ack never counts.
- A participant sent a replay that has acked nothing since gets no other replay and no
  retransmits until it acks (`resync_gate`): a never-acking peer costs one replay, not one
  per request.
- An ack is taken only for an envelope that was sent to its sender (a session and seq it was
  never sent is dropped, counted, never written). A cumulative ack covers every unacked
  envelope of its session up to its seq; ack rows are written in one INSERT per flush.
- An idle room runs no timer: the retransmit loop sleeps until something is pending, the ack
  flush until an ack arrives.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from steward.canvas.mirror import CanvasMirror
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.obs.stage_hooks import Stage, StageHooks
from steward.protocol.messages import Ack, ActionEnvelope, WireAction
from steward.protocol.names import TOPIC_ACTION, TOPIC_ACTIONS
from steward.room.envelopes import frames, pack
from steward.room.resync_gate import ResyncGate
from steward.store.outbox import TRANSIENT, AckRow, Outbox, OutboxRow
from steward.task_set import TaskSet

log = get_logger(__name__)

ACK_FLUSH_S = 0.1
# Live envelopes handed to LiveKit and not yet sent, per room; more wait (backpressure).
MAX_IN_FLIGHT = 64
# Retransmit pacing (see the module docstring).
MAX_BACKOFF_S = 5.0
MAX_DOUBLINGS = 6  # past MAX_BACKOFF_S from any floor above 0.08 s
RETRANSMIT_BUDGET = 32
CLOSE_FLUSH_S = 5.0
# Envelopes queued for the flush beyond which a non-waiting send waits for it (backpressure).
MAX_QUEUED = 256
GIVE_UP_S = 60.0
# An action's previews at most this often (its first at once; its final always).
PREVIEW_INTERVAL_S = 0.2
# Ack rows waiting for Postgres; acks only spare replays, so a long outage may drop some.
MAX_ACK_ROWS_KEPT = 50_000


class Publisher(Protocol):
    """Hands a packet to LiveKit when called (so calls keep their order) and returns an
    awaitable for its completion, which the caller may await later."""

    def __call__(
        self, payload: bytes, *, topic: str, destinations: list[str]
    ) -> Awaitable[None]: ...


@dataclass
class StreamStats:
    """Per-session delivery figures (for the session's end-of-run log line)."""

    envelopes: int = 0
    actions: int = 0
    retransmits: int = 0
    resyncs: int = 0
    previews_coalesced: int = 0  # previews not sent: unacked predecessor, or paced
    previews_paced: int = 0  # of those, held by `preview_interval_s` alone
    last_seq: int = 0
    acks: Counter[str] = field(default_factory=Counter)
    first_envelope_at: float | None = None
    first_applied_at: float | None = None


@dataclass
class FlushStats:
    """Per-room figures of the flushes: how well envelopes share INSERTs and packets."""

    inserts: int = 0  # outbox INSERT statements (one per flush)
    packets: int = 0  # live packets handed to LiveKit (first sends)
    envelopes: int = 0  # envelopes in them
    acks: int = 0  # ack packets taken (a cumulative one counts once)


@dataclass
class _Pending:
    payload: bytes
    last_sent: float
    attempts: int = 0
    first_sent: float = 0.0
    # False while LiveKit still holds the packet: its retransmit timer starts when it left.
    sent: bool = True


@dataclass
class _Queued:
    """An envelope numbered, encoded once and applied to the mirror, waiting for the room's
    next flush."""

    session_id: str
    seq: int
    room_order: int
    partial: bool
    payload: bytes
    actions: int
    # Set when a caller waits for this envelope's flush; `flushed` once it is over.
    done: asyncio.Future[None] | None = None
    flushed: bool = False

    def row(self) -> OutboxRow:
        return OutboxRow(
            self.session_id, self.seq, self.room_order, self.partial, self.payload.decode()
        )


@dataclass
class _AckClock:
    """A participant's ack round trip, smoothed as TCP does (RFC 6298), from envelopes
    acked without a retransmit; and, as Karn's algorithm does, a timeout that stays doubled
    after a retransmit until such an ack comes. Without that, a peer whose acks merely lag
    gets every new envelope retransmitted (so none is ever timed and the timeout never
    grows): a loaded client process turned 1.6 thousand envelopes into 10 thousand resends."""

    srtt: float | None = None
    rttvar: float = 0.0
    last_ack_at: float = 0.0
    backoff: int = 0  # doublings since the last timed ack

    def sample(self, rtt: float) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        self.backoff = 0

    def timed_out(self) -> None:
        """A retransmit went to this participant: wait longer for the next envelope too."""
        self.backoff = min(self.backoff + 1, MAX_DOUBLINGS)

    def timeout(self, floor: float) -> float:
        base = floor if self.srtt is None else max(floor, self.srtt + 4 * self.rttvar)
        return min(MAX_BACKOFF_S, base * float(2**self.backoff))


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
        mirror: CanvasMirror | None = None,
        clock: Callable[[], float] = time.monotonic,
        fence: int | None = None,
        preview_interval_s: float = PREVIEW_INTERVAL_S,
    ) -> None:
        self.room_id = room_id
        self.preview_interval_s = preview_interval_s
        # The room lease's token: every append carries it, so a lost lease publishes nothing.
        self.fence = fence
        self._publish = publish
        self.outbox = outbox
        self._recipients = recipients
        self.retransmit_after_s = retransmit_after_s
        self.retransmit_attempts = retransmit_attempts
        self.mirror = mirror if mirror is not None else CanvasMirror()
        self._clock = clock
        self._room_order = 0
        self._seq: dict[str, int] = {}
        self._stats: dict[str, StreamStats] = {}
        # participant -> (session_id, seq) -> pending envelope
        self._pending: dict[str, dict[tuple[str, int], _Pending]] = {}
        # A host that left (host mode) with envelopes unacked, until the next host takes them.
        self._orphaned: dict[str, dict[tuple[str, int], _Pending]] = {}
        self._clocks: dict[str, _AckClock] = {}
        # participant → session → highest seq sent to it (acks above it are refused).
        self._sent_to: dict[str, dict[str, int]] = {}
        # (session_id, action id) → (seq, clock) of its last preview sent; dropped at its final.
        self._previews: dict[tuple[str, str], tuple[int, float]] = {}
        self._ack_rows: list[AckRow] = []
        # Envelopes numbered and waiting for the flush; the last one numbered.
        self._queue: list[_Queued] = []
        self._tail: _Queued | None = None
        self._flusher: asyncio.Task[None] | None = None
        # session → highest seq handed to LiveKit; errors of flushes nobody waited for.
        self._handed: dict[str, int] = {}
        self._failed: dict[str, BaseException] = {}
        self.flush_stats = FlushStats()
        self.hooks = StageHooks()
        self._tasks = TaskSet("broadcast_task_failed", room=room_id)
        self._in_flight: collections.deque[asyncio.Task[None]] = collections.deque()
        self._loops: list[asyncio.Task[None]] = []
        # Set when there is something to retransmit / ack rows to write: an idle room's loops
        # sleep on these instead of ticking (a tick per room costs CPU at hundreds of rooms).
        self._pending_added = asyncio.Event()
        self._acks_added = asyncio.Event()
        self.gate = ResyncGate()

    # --- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        self._room_order = await self.outbox.max_room_order(self.room_id)
        self._loops = [
            asyncio.create_task(self._retransmit_loop(), name=f"retransmit:{self.room_id}"),
            asyncio.create_task(self._ack_flush_loop(), name=f"acks:{self.room_id}"),
        ]

    @property
    def room_order(self) -> int:
        """The room-wide order of the last envelope handed over (rebuilt from the outbox)."""
        return self._room_order

    async def close(self) -> None:
        if self._flusher is not None:  # what was queued is persisted and handed over first
            await asyncio.wait([self._flusher], timeout=CLOSE_FLUSH_S)
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
        seq = await self._known_seq(session_id)
        self._raise_failed(session_id)
        if not actions:
            return seq
        held = self._held_preview(session_id, actions) if partial else None
        if held is not None:
            stats = self.stats(session_id)
            stats.previews_coalesced += 1
            stats.previews_paced += held == "paced"
            return seq
        last = self._number(session_id, actions, partial)
        if wait or len(self._queue) >= MAX_QUEUED:
            await self._flushed(last)
        return last.seq

    async def flush(self, session_id: str) -> None:
        """Wait until everything queued so far is persisted and handed to LiveKit; raises
        what a flush of the session's envelopes failed with since its last send."""
        if self._tail is not None:
            await self._flushed(self._tail)
        self._raise_failed(session_id)

    def _number(self, session_id: str, actions: list[WireAction], partial: bool) -> _Queued:
        """Apply to the mirror, number, encode and queue every envelope of one send."""
        seq = self._seq[session_id]
        now = self._clock()
        self.mirror.apply(actions, partial=partial, session=session_id)
        for group in pack(session_id, actions, partial=partial):
            seq += 1
            for action in group:
                if partial:
                    self._previews[(session_id, action.id)] = (seq, now)
                else:
                    self._previews.pop((session_id, action.id), None)
            self._room_order += 1
            envelope = ActionEnvelope(
                session_id=session_id,
                seq=seq,
                partial=partial or None,
                actions=group,
                ts=time.time(),
            )
            self._tail = _Queued(
                session_id, seq, self._room_order, partial, envelope.to_wire(), len(group)
            )
            self._queue.append(self._tail)
        self._seq[session_id] = seq
        if self._flusher is None:  # its first step runs after this loop turn's other sends
            self._flusher = self._tasks.spawn(self._flush_queue())
        return self._tail  # type: ignore[return-value]  # pack returns at least one group

    async def _flushed(self, item: _Queued) -> None:
        if item.flushed:
            return
        if item.done is None:
            item.done = asyncio.get_running_loop().create_future()
            # Retrieved even when its waiter was cancelled, so asyncio never warns about it.
            item.done.add_done_callback(lambda f: f.cancelled() or f.exception())
        await asyncio.shield(item.done)

    async def _flush_queue(self) -> None:
        """Until the queue is empty: take all of it, persist it in one INSERT (fenced once),
        hand it to LiveKit in order. Sends queued meanwhile make the next round."""
        chunk: list[_Queued] = []
        try:
            while self._queue:
                chunk, self._queue = self._queue, []
                try:
                    await self.outbox.append_many(
                        self.room_id, [q.row() for q in chunk], fence=self.fence
                    )
                except Exception as err:
                    failed, chunk, self._queue = chunk + self._queue, [], []
                    self._fail(failed, err)
                    continue
                self._persisted(chunk)
                self.flush_stats.inserts += 1
                await self._hand_over(chunk)
                self._settled(chunk)
                chunk = []
        except BaseException as err:  # closed, or a bug: no sender may wait forever
            closed = isinstance(err, asyncio.CancelledError)
            self._fail(chunk + self._queue, RuntimeError("broadcaster closed") if closed else err)
            self._queue = []
            raise
        finally:
            self._flusher = None

    def _persisted(self, chunk: list[_Queued]) -> None:
        now = self._clock()
        for q in chunk:
            stats = self.stats(q.session_id)
            stats.envelopes += 1
            stats.actions += q.actions
            stats.last_seq = q.seq
            if stats.first_envelope_at is None:
                stats.first_envelope_at = now

    async def _hand_over(self, chunk: list[_Queued]) -> None:
        payloads = [q.payload for q in chunk]
        for start, end, frame in frames(payloads):
            await self._room_for_one_more()
            sent = chunk[start:end]
            keys = [(q.session_id, q.seq, q.payload) for q in sent]
            # Not awaited: the next packet is handed to LiveKit without waiting for this
            # one's native round trip (the call order is the send order).
            self._issue_tracked(keys, frame, self._recipients(), "live")
            self.flush_stats.packets += 1
            self.flush_stats.envelopes += len(sent)
            for q in sent:
                self._handed[q.session_id] = q.seq

    @staticmethod
    def _settled(chunk: list[_Queued], err: BaseException | None = None) -> None:
        for q in chunk:
            q.flushed = True
            if q.done is not None and not q.done.done():
                if err is None:
                    q.done.set_result(None)
                else:
                    q.done.set_exception(err)

    def _fail(self, failed: list[_Queued], err: BaseException) -> None:
        """Nothing of `failed` was persisted: their sessions renumber from the outbox, their
        previews are forgotten, and the error reaches every sender of them."""
        if not failed:
            return
        log.warning("send_failed", room=self.room_id, envelopes=len(failed), error=str(err))
        sessions = {q.session_id for q in failed}
        for session_id in sessions:
            self._seq.pop(session_id, None)
        first = {q.session_id: q.seq for q in reversed(failed)}
        for key, (seq, _) in list(self._previews.items()):
            if key[0] in first and seq >= first[key[0]]:
                del self._previews[key]
        waited = {q.session_id for q in failed if q.done is not None}
        for session_id in sessions - waited:
            self._failed[session_id] = err
        self._settled(failed, err)

    def _raise_failed(self, session_id: str) -> None:
        err = self._failed.pop(session_id, None)
        if err is not None:
            raise err

    def _held_preview(self, session_id: str, actions: list[WireAction]) -> str | None:
        """Why a partial send is not sent, or None: every action of it has a previous preview
        numbered within `preview_interval_s` ("paced"), or still queued, unacked by some
        participant or not yet sent by LiveKit ("unacked"): its successor (or the final)
        carries everything it has."""
        handed = self._handed.get(session_id, 0)
        now = self._clock()
        reason = "paced"
        for action in actions:
            prev = self._previews.get((session_id, action.id))
            if prev is None:
                return None
            seq, at = prev
            if now - at < self.preview_interval_s:
                continue
            key = (session_id, seq)
            if seq <= handed and not any(key in p for p in self._pending.values()):
                return None
            reason = "unacked"
        return reason

    async def last_seq(self, session_id: str) -> int:
        """The session's highest seq sent (0 before any), from the outbox if not ours; what
        is queued is flushed first."""
        if self._tail is not None:
            with contextlib.suppress(Exception):  # a failed flush renumbers the session
                await self._flushed(self._tail)
        return await self._known_seq(session_id)

    def new_session(self, session_id: str) -> None:
        """A session id just minted here: it has no outbox rows, so its first send reads
        none (that read was a round trip before the first envelope of every session)."""
        self._seq.setdefault(session_id, 0)

    async def _known_seq(self, session_id: str) -> int:
        """The last seq numbered, read once from the outbox for a session that already has
        rows there (the room's relay session after a restart, an interrupted one)."""
        if session_id not in self._seq:
            found = await self.outbox.max_seq(session_id)
            return self._seq.setdefault(session_id, found)  # a concurrent first send won
        return self._seq[session_id]

    async def _room_for_one_more(self) -> None:
        flight = self._in_flight
        while flight and (flight[0].done() or len(flight) >= MAX_IN_FLIGHT):
            await asyncio.wait([flight.popleft()])

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
        entries = []
        self._pending_added.set()
        for identity in destinations:
            pending = self._pending.setdefault(identity, {})
            for session_id, seq, payload in envelopes:
                entry = _Pending(payload, now, sent=False, first_sent=now)
                pending[(session_id, seq)] = entry
                entries.append(entry)
                self._mark_sent(identity, session_id, seq)
        done = self._issue(frame, len(envelopes), destinations, kind)
        task = self._tasks.spawn(self._settle(done, kind, len(envelopes), entries))
        if kind == "live":
            self._in_flight.append(task)
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
        entries: Sequence[_Pending] = (),
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
        track: Sequence[tuple[str, int]] | None = None,
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
    def _mark_sent(self, participant: str, session_id: str, seq: int) -> None:
        sent = self._sent_to.setdefault(participant, {})
        if seq > sent.get(session_id, 0):
            sent[session_id] = seq

    def on_ack(self, participant: str, ack: Ack) -> str | None:
        """Take an ack; returns why it was dropped (never sent to them), or None."""
        sent = self._sent_to.get(participant, {}).get(ack.session_id)
        if sent is None or ack.seq > sent:
            reason = "unknown_session" if sent is None else "unsent_seq"
            metrics.ACKS_DROPPED.labels(reason=reason).inc()
            return reason
        pending = self._pending.get(participant, {})
        key = (ack.session_id, ack.seq)
        covered = [key]
        if ack.cumulative:  # and every unacked envelope of the session before it
            covered = [k for k in pending if k[0] == ack.session_id and k[1] < ack.seq] + covered
        entry = pending.pop(key, None)
        for k in covered[:-1]:
            del pending[k]
        now = self._clock()
        clock = self._clocks.setdefault(participant, _AckClock())
        clock.last_ack_at = now
        if entry is not None and entry.attempts == 0:  # Karn: never time a retransmit
            clock.sample(now - entry.last_sent)
        stats = self._stats.get(ack.session_id)
        if stats is not None:
            stats.acks[participant] += len(covered)
            if stats.first_applied_at is None:
                stats.first_applied_at = self._clock()
        metrics.ACKS.inc()
        self.flush_stats.acks += 1
        # A row per envelope (late joiners' replays skip what a row says was applied); the
        # ids the ack lists go with its own seq.
        self._ack_rows.extend(
            AckRow(s, q, participant, "[]", ack.applied_at) for s, q in covered[:-1]
        )
        self._ack_rows.append(
            AckRow(ack.session_id, ack.seq, participant, json.dumps(ack.applied), ack.applied_at)
        )
        self._acks_added.set()
        self.gate.acked(participant)
        return None

    def unacked(self, participant: str) -> int:
        return len(self._pending.get(participant, {}))

    def unacked_in(self, session_id: str) -> int:
        """Envelope copies of the session some participant has not acked yet."""
        return sum(1 for p in self._pending.values() for key in p if key[0] == session_id)

    def total_unacked(self) -> int:
        return sum(len(p) for p in self._pending.values())

    def forget(self, participant: str, *, keep_unacked: bool = False) -> None:
        """The participant left: stop retransmitting to it. `keep_unacked` (a leaving host in
        host mode) keeps what it never acked for `hand_over` to the next host."""
        unacked = self._pending.pop(participant, None)
        if keep_unacked and unacked:
            self._orphaned = {participant: unacked}
        self._clocks.pop(participant, None)
        self._sent_to.pop(participant, None)
        self.gate.forget(participant)

    def hand_over(self, old: str, new: str) -> int:
        """Host mode: the envelopes `old` was sent and never acked go to `new` now, in the
        order they were first sent, before any later live send (this runs synchronously in
        the host change). The new host's canvas holds what the old host applied, through the
        app's own sync; returns the envelopes handed over."""
        entries = self._pending.pop(old, None) or self._orphaned.pop(old, None) or {}
        self._orphaned.clear()
        keys = [(sid, seq, p.payload) for (sid, seq), p in entries.items()]
        for start, end, frame in frames([payload for _, _, payload in keys]):
            self._issue_tracked(keys[start:end], frame, [new], "handover")
        if keys:
            log.info("host_handover", room=self.room_id, old=old, new=new, envelopes=len(keys))
        return len(keys)

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
                self._mark_sent(participant, session_id, seq)
        await self._publish_frames(payloads, [participant], "replay", keys if track else None)
        if rows:
            self.gate.replayed(participant)
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

    # --- loops ---------------------------------------------------------------------------
    async def _retransmit_loop(self) -> None:
        tick = max(0.02, self.retransmit_after_s / 4)
        while True:
            if not any(self._pending.values()):  # nothing can come due until a send
                self._pending_added.clear()
                await self._pending_added.wait()
            await asyncio.sleep(tick)
            try:
                await self.retransmit_due()
            except Exception:
                log.exception("retransmit_failed", room=self.room_id)

    async def retransmit_due(self) -> None:
        """One pass of the retransmit loop: resend what is due, resync or give up on the rest."""
        now = self._clock()
        due: dict[tuple[str, int], list[str]] = {}
        payloads: dict[tuple[str, int], bytes] = {}
        resyncs: dict[tuple[str, str], int] = {}  # (participant, session) -> oldest unacked seq
        budget = RETRANSMIT_BUDGET
        for participant, entries in list(self._pending.items()):
            clock = self._clocks.setdefault(participant, _AckClock(last_ack_at=now))
            if entries and now - self._waiting_since(clock, entries) > GIVE_UP_S:
                self._give_up(participant, entries)
                continue
            if self.gate.owes_ack(participant):  # replayed to, silent since: no more
                continue
            rto = clock.timeout(self.retransmit_after_s)
            resent = False
            # Oldest first (dicts keep send order): the head of the gap unblocks the client.
            for key, p in list(entries.items()):
                if not p.sent:
                    continue
                if p.attempts > self.retransmit_attempts:  # resynced once already
                    if now - p.last_sent > GIVE_UP_S:
                        del entries[key]
                    continue
                backoff = min(MAX_BACKOFF_S, rto * 2**p.attempts)
                if now - p.last_sent < backoff:
                    continue
                if p.attempts == self.retransmit_attempts:
                    first = resyncs.setdefault((participant, key[0]), key[1])
                    resyncs[(participant, key[0])] = min(first, key[1])
                    continue
                if budget <= 0:
                    break
                budget -= 1
                p.attempts += 1
                p.last_sent = now
                due.setdefault(key, []).append(participant)
                payloads[key] = p.payload
                resent = True
            if resent:
                clock.timed_out()
        # One packet (or as few as fit) per set of lagging participants, oldest first.
        groups: dict[tuple[str, ...], list[tuple[str, int]]] = {}
        for key, lagging in sorted(due.items(), key=lambda kv: kv[0][1]):
            stats = self._stats.get(key[0])
            if stats is not None:
                stats.retransmits += len(lagging)
            metrics.RETRANSMITS.inc(len(lagging))
            groups.setdefault(tuple(lagging), []).append(key)
        for lagging_set, keys in groups.items():
            batch = [payloads[key] for key in keys]
            await self._publish_frames(batch, list(lagging_set), "retransmit")
        for (participant, session_id), first_seq in resyncs.items():
            await self._resync_exhausted(participant, session_id, first_seq, now)

    async def _resync_exhausted(
        self, participant: str, session_id: str, first_seq: int, now: float
    ) -> None:
        """Retransmits ran out: replay the session from the outbox once, from `first_seq`."""
        entries = [p for k, p in self._pending.get(participant, {}).items() if k[0] == session_id]
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

    @staticmethod
    def _waiting_since(clock: _AckClock, entries: dict[tuple[str, int], _Pending]) -> float:
        """Since when the participant owes an ack: its last ack, or the first send of its
        oldest unacked envelope if that came later (idle time owes nothing)."""
        oldest = min((p.first_sent for p in entries.values() if p.sent), default=clock.last_ack_at)
        return max(clock.last_ack_at, oldest)

    def _give_up(self, participant: str, entries: dict[tuple[str, int], _Pending]) -> None:
        """Acked nothing for GIVE_UP_S while envelopes waited: stop; it resyncs on return."""
        log.warning(
            "participant_unresponsive",
            room=self.room_id,
            participant=participant,
            unacked=len(entries),
            sessions=sorted({k[0] for k in entries}),
            silent_s=GIVE_UP_S,
        )
        entries.clear()

    async def _ack_flush_loop(self) -> None:
        while True:
            await self._acks_added.wait()
            # The acks of the next ACK_FLUSH_S join this one's INSERT.
            await asyncio.sleep(ACK_FLUSH_S)
            self._acks_added.clear()
            try:
                await self.flush_acks()
            except TRANSIENT as err:  # Postgres restarting: the rows wait for the next flush
                log.warning("ack_flush_deferred", room=self.room_id, error=str(err))
            except Exception:
                log.exception("ack_flush_failed", room=self.room_id)

    @property
    def acks_unflushed(self) -> int:
        """Acks received and not yet written to the outbox."""
        return len(self._ack_rows)

    async def flush_acks(self) -> None:
        """Write the acks received since the last flush to the outbox."""
        rows, self._ack_rows = self._ack_rows, []
        try:
            await self.outbox.record_acks(rows)
        except Exception:
            # Kept for the next flush (Postgres restarting); bounded, oldest dropped first.
            self._ack_rows = (rows + self._ack_rows)[-MAX_ACK_ROWS_KEPT:]
            self._acks_added.set()
            raise
