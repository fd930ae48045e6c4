"""Pure pieces of the room runtime: host election, envelope packing, gap buffer, intake."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import asyncpg
import pytest

from steward.canvas.mirror import CanvasMirror
from steward.headless.ordering import GapBuffer
from steward.protocol.limits import MAX_BATCH_BYTES, MAX_ENVELOPE_BYTES
from steward.protocol.messages import Ack, ActionEnvelope, EnvelopeBatch, WireAction
from steward.protocol.names import TOPIC_ACTION, TOPIC_ACTIONS
from steward.room.broadcaster import Broadcaster
from steward.room.envelopes import FragmentAssembler, envelopes_in, frames, is_fragment, pack
from steward.room.intake import RateLimiter, addressed_text
from steward.room.participants import Member, Participants, elect_host
from steward.store.outbox import Outbox, OutboxRow


def member(identity: str, joined: int, caps: str = "context,screenshot,apply") -> Member:
    return Member(identity, joined, {"steward.capabilities": caps})


def test_host_is_earliest_capable_then_lowest_identity() -> None:
    members = [member("zed", 5), member("amy", 9), member("bob", 5), member("eve", 1, "apply")]
    assert elect_host(members) == "bob"  # eve joined first but cannot give context
    assert elect_host([member("eve", 1, "apply")]) is None
    assert elect_host(list(reversed(members))) == "bob"  # order-independent


async def test_steward_reconnect_does_not_make_the_host_flap() -> None:
    changes: list[tuple[str | None, str | None]] = []
    p = Participants(lambda old, new: changes.append((old, new)), reconnect_grace_s=0.05)
    p.joined("alice", 1, {"steward.capabilities": "context"})
    p.joined("bob", 2, {"steward.capabilities": "context"})
    assert p.host == "alice" and changes == [(None, "alice")]
    # Full reconnect: the SDK reports everyone gone, then re-adds them.
    p.connection_reconnecting()
    p.left("alice")
    p.left("bob")
    p.connection_reconnected(lambda: {"alice", "bob"})
    p.joined("bob", 2, {"steward.capabilities": "context"})
    p.joined("alice", 1, {"steward.capabilities": "context"})
    await asyncio.sleep(0.1)
    assert p.host == "alice" and changes == [(None, "alice")]
    # A real leave: the next capable browser becomes host after the short debounce.
    p.left("alice")
    assert p.host == "alice"
    await asyncio.sleep(0.3)
    assert p.host == "bob" and changes[-1] == ("alice", "bob")


async def test_who_is_not_back_after_our_reconnect_has_left() -> None:
    p = Participants(reconnect_grace_s=0.05)
    p.joined("alice", 1, {"steward.capabilities": "context"})
    p.joined("bob", 2, {"steward.capabilities": "context"})
    p.connection_reconnecting()
    p.left("alice")
    p.left("bob")
    p.connection_reconnected(lambda: {"bob"})
    await asyncio.sleep(0.15)
    assert p.get("alice") is None and p.host == "bob"


def action(i: int, text_len: int = 100) -> WireAction:
    return WireAction(
        id=f"a{i}",
        name="create_shape",
        params={"id": f"s{i}", "type": "text", "x": i, "y": 0, "props": {"text": 'é"x' * text_len}},
    )


def test_packing_keeps_order_and_every_envelope_fits() -> None:
    actions = [action(i, text_len=300 + 40 * i) for i in range(60)]
    groups = pack("session-1", actions)
    assert len(groups) > 1
    assert [a.id for g in groups for a in g] == [a.id for a in actions]
    for seq, group in enumerate(groups, 1):
        env = ActionEnvelope(session_id="session-1", seq=seq, actions=group, ts=1.7e9)
        assert len(env.to_wire()) <= MAX_ENVELOPE_BYTES


def test_an_oversized_action_is_fragmented_never_dropped() -> None:
    big = action(1, text_len=20_000)  # ~80 KB of params with escapes and multi-byte chars
    groups = pack("s", [action(0), big, action(2)])
    frags = [g[0] for g in groups if is_fragment(g[0].params)]
    assert len(frags) >= 5
    assembler = FragmentAssembler()
    out = None
    for seq, group in enumerate(groups, 1):
        env = ActionEnvelope(session_id="s", seq=seq, actions=group, ts=1.7e9, partial=True)
        assert len(env.to_wire()) <= MAX_ENVELOPE_BYTES
        for a in group:
            if is_fragment(a.params):
                out = assembler.add(a.id, a.params) or out
    assert out == big.params


def env(seq: int, session: str = "s") -> ActionEnvelope:
    return ActionEnvelope(session_id=session, seq=seq, actions=[], ts=0.0)


def test_gap_buffer_releases_in_order_and_flags_duplicates() -> None:
    buf = GapBuffer()
    assert [e.seq for e in buf.offer(env(1)).ready] == [1]
    assert buf.offer(env(3)).held
    assert buf.offer(env(4)).held
    assert buf.offer(env(3)).duplicate  # already held
    assert buf.stalled(0.0, now=1e12) == {"s": 1}
    assert [e.seq for e in buf.offer(env(2)).ready] == [2, 3, 4]
    assert buf.offer(env(2)).duplicate and buf.offer(env(1)).duplicate
    assert buf.stalled(0.0) == {} and buf.last_seq("s") == 4
    assert [e.seq for e in buf.offer(env(1, "other")).ready] == [1]


def test_mirror_reverts_partial_versions_per_session() -> None:
    r = CanvasMirror()
    base = {"id": "b", "type": "geo", "x": 0, "y": 0, "props": {"w": 10, "h": 10, "text": "S"}}
    r.apply_one(WireAction(id="a", name="create_shape", params=base), partial=True, session="s")
    grown = {**base, "props": {**base["props"], "text": "Sign"}}
    r.apply_one(WireAction(id="a", name="create_shape", params=grown), partial=True, session="s")
    assert r.in_flight("s") == ["a"] and r.in_flight("other") == []
    # The same action id in another session is another action.
    r.apply_one(WireAction(id="a", name="think", params={"text": "x"}), session="other")
    assert r.in_flight("s") == ["a"] and "b" in r.shapes
    r.apply_one(WireAction(id="a", name="think", params={"text": "canceled"}), session="s")
    assert r.shapes == {} and r.in_flight("s") == []


def test_wake_phrase_and_rate_limit() -> None:
    assert addressed_text("Steward, draw a cat", "steward") == "draw a cat"
    assert addressed_text("hey steward draw a cat", "steward") == "draw a cat"
    assert addressed_text("ask the steward to draw", "steward") == "ask the steward to draw"
    assert addressed_text("stewardship matters", "steward") is None
    assert addressed_text("nothing here", "steward") is None
    t = [0.0]
    limiter = RateLimiter(2, clock=lambda: t[0])
    assert limiter.allow("a") and limiter.allow("a") and not limiter.allow("a")
    assert limiter.allow("b")
    t[0] = 61.0
    assert limiter.allow("a")


class _MemoryOutbox:
    """Just enough of `Outbox` for the broadcaster, in memory."""

    def __init__(self) -> None:
        self.rows: list[OutboxRow] = []
        self.inserts: list[list[int]] = []  # the seqs of each INSERT

    async def max_seq(self, session_id: str) -> int:
        return max((r.seq for r in self.rows if r.session_id == session_id), default=0)

    async def append_many(
        self,
        room_id: str,
        rows: list[OutboxRow],
        *,
        if_absent: bool = False,
        fence: int | None = None,
    ) -> None:
        assert fence is None  # no lease in these tests
        self.inserts.append([r.seq for r in rows])
        for row in rows:
            if any(r.session_id == row.session_id and r.seq == row.seq for r in self.rows):
                assert if_absent, f"duplicate seq {row.seq}"
                continue
            self.rows.append(row)

    async def session_after(self, room_id: str, session_id: str, last_seq: int) -> list[OutboxRow]:
        return [r for r in self.rows if r.session_id == session_id and r.seq > last_seq]


async def _two_sent(publish: Any, now: list[float]) -> Broadcaster:
    """A broadcaster to ann and bob (RTO floor 0.1 s, 2 retransmits) that sent seq 1 and 2."""
    b = Broadcaster(
        "r",
        publish,
        _MemoryOutbox(),  # type: ignore[arg-type]
        lambda: ["ann", "bob"],
        retransmit_after_s=0.1,
        retransmit_attempts=2,
        clock=lambda: now[0],
    )
    await b.send("s", [action(1)])
    await b.send("s", [action(2)])
    await asyncio.sleep(0)  # a loop turn: LiveKit's completions settle (retransmit timers start)
    await asyncio.sleep(0)
    return b


async def test_retransmits_are_bounded_then_one_resync_from_the_outbox() -> None:
    now = [0.0]
    sent: list[tuple[str, int, list[str]]] = []

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        for env in envelopes_in(topic, payload):  # retransmits travel in batches
            sent.append((env["sessionId"], env["seq"], list(destinations)))

    b = await _two_sent(publish, now)
    # ann acks everything; bob acks nothing.
    for seq in (1, 2):
        b.on_ack("ann", Ack(session_id="s", seq=seq, applied=[f"a{seq}"], applied_at=0))
    for _ in range(200):  # 20 s of ticks
        now[0] += 0.1
        await b._retransmit_due()
    to_bob = [(seq, d) for _, seq, d in sent if "bob" in d]
    assert all(d == ["bob"] for _, d in to_bob[2:]), "retransmits went to the lagging peer only"
    per_seq = Counter(seq for seq, _ in to_bob)
    # Each: the live send, 2 retransmits, then one replay from the outbox; nothing after that.
    assert per_seq == {1: 4, 2: 4}
    assert b.stats("s").resyncs == 1
    assert b.unacked("bob") == 2 and b.unacked("ann") == 0


async def test_a_resync_that_finds_postgres_away_is_tried_again() -> None:
    now = [0.0]
    sent: list[tuple[int, list[str]]] = []

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        sent.extend((env["seq"], list(destinations)) for env in envelopes_in(topic, payload))

    b = await _two_sent(publish, now)
    for seq in (1, 2):  # ann has everything; bob nothing
        b.on_ack("ann", Ack(session_id="s", seq=seq, applied=[f"a{seq}"], applied_at=0))
    outbox = b.outbox
    real_after = outbox.session_after
    down = [True]

    async def session_after(room_id: str, session_id: str, last_seq: int) -> list[OutboxRow]:
        if down[0]:
            raise OSError("connection refused")
        return await real_after(room_id, session_id, last_seq)

    outbox.session_after = session_after  # type: ignore[method-assign]
    for _ in range(50):  # retransmits run out while Postgres is away: no replay yet
        now[0] += 0.1
        await b._retransmit_due()
    assert b.stats("s").resyncs == 0 and b.unacked("bob") == 2
    down[0] = False
    for _ in range(50):
        now[0] += 0.1
        await b._retransmit_due()
    # The replay came once Postgres was back (the trailing seq 2 included), and only once.
    assert b.stats("s").resyncs == 1
    assert Counter(seq for seq, d in sent if d == ["bob"]) == {1: 3, 2: 3}


def test_gap_buffer_treats_missing_trailing_envelopes_as_a_gap() -> None:
    buf = GapBuffer()
    e1 = ActionEnvelope(session_id="s", seq=1, actions=[action(1)], ts=0)
    buf.offer(e1, now=0.0)
    buf.expect("s", 3, now=10.0)  # the final status says the session ended at seq 3
    assert buf.stalled(1.0, now=10.5) == {}  # a retransmit may still come
    assert buf.stalled(1.0, now=11.5) == {"s": 1}
    buf.offer(ActionEnvelope(session_id="s", seq=2, actions=[action(2)], ts=0), now=12.0)
    assert buf.stalled(1.0, now=13.5) == {"s": 2}  # still short of 3
    buf.offer(ActionEnvelope(session_id="s", seq=3, actions=[action(3)], ts=0), now=14.0)
    assert buf.stalled(1.0, now=99.0) == {}
    buf.expect("s", 3, now=100.0)  # a repeated status: nothing missing
    assert buf.stalled(1.0, now=200.0) == {}


class _FlakyPool:
    """A pool whose first INSERTs fail as during a Postgres restart."""

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    async def execute(self, query: str, *args: Any) -> str:
        self.calls += 1
        if self.failures:
            failure = self.failures.pop(0)
            if isinstance(failure, asyncpg.UniqueViolationError) and "ON CONFLICT" in query:
                return "INSERT 0 0"  # an if-absent INSERT of rows already there
            raise failure
        return f"INSERT 0 {len(args[1])}"

    async def fetchval(self, query: str, *args: Any) -> int:
        return len(args[0])  # every row asked about is there (the lost attempt committed)


async def test_outbox_append_waits_out_a_postgres_restart() -> None:
    restarting = [asyncpg.CannotConnectNowError("starting up"), OSError("refused")]
    pool = _FlakyPool(restarting)
    await Outbox(pool, retry_s=5).append("r", "s", 1, 1, False, "{}")  # type: ignore[arg-type]
    assert pool.calls == 3
    # The attempt that lost its connection had committed: the retry's duplicate is success.
    lost = [asyncpg.ConnectionDoesNotExistError("closed"), asyncpg.UniqueViolationError("dup")]
    pool = _FlakyPool(lost)
    await Outbox(pool, retry_s=5).append("r", "s", 1, 1, False, "{}")  # type: ignore[arg-type]
    assert pool.calls == 2
    # A first-attempt duplicate is a real error (two writers of one seq), and so is a
    # restart that outlasts retry_s.
    with pytest.raises(asyncpg.UniqueViolationError):
        await Outbox(_FlakyPool([asyncpg.UniqueViolationError("dup")]), retry_s=5).append(  # type: ignore[arg-type]
            "r", "s", 1, 1, False, "{}"
        )
    down = _FlakyPool([OSError("refused")] * 1000)
    with pytest.raises(OSError):
        await Outbox(down, retry_s=0.3).append("r", "s", 1, 1, False, "{}")  # type: ignore[arg-type]


class _StallingOutbox(_MemoryOutbox):
    """The INSERT holding seq `stall_at` waits until `release` is set."""

    def __init__(self, stall_at: int) -> None:
        super().__init__()
        self.stall_at, self.stalled, self.release = stall_at, asyncio.Event(), asyncio.Event()

    async def append_many(self, room_id: str, rows: list[OutboxRow], **kw: Any) -> None:
        if any(r.seq == self.stall_at for r in rows) and not self.stalled.is_set():
            self.stalled.set()
            await self.release.wait()
        await super().append_many(room_id, rows, **kw)


async def test_a_send_whose_caller_is_cancelled_mid_insert_is_finished_in_order() -> None:
    sent: list[int] = []

    def publish(payload: bytes, *, topic: str, destinations: list[str]) -> asyncio.Future[None]:
        sent.append(ActionEnvelope.model_validate_json(payload).seq)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    outbox = _StallingOutbox(stall_at=2)
    b = Broadcaster("r", publish, outbox, lambda: ["ann"])  # type: ignore[arg-type]
    await b.send("s", [action(1)])
    caller = asyncio.ensure_future(b.send("s", [action(2)]))
    await outbox.stalled.wait()
    caller.cancel()  # e.g. the user cancelled the run while seq 2 was being written
    with pytest.raises(asyncio.CancelledError):
        await caller
    # The revert that follows a cancel gets the next seq, after seq 2 was finished.
    revert = asyncio.ensure_future(b.send("s", [action(3)]))
    await asyncio.sleep(0)
    outbox.release.set()
    assert await revert == 3
    assert [r.seq for r in outbox.rows] == [1, 2, 3]
    assert sent == [1, 2, 3]
    assert b.stats("s").envelopes == 3 and b.stats("s").last_seq == 3


async def test_sends_of_one_loop_turn_share_one_insert_and_one_packet() -> None:
    packets: list[tuple[str, bytes, list[str]]] = []

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        packets.append((topic, payload, list(destinations)))

    outbox = _MemoryOutbox()
    b = Broadcaster("r", publish, outbox, lambda: ["ann", "bob"])  # type: ignore[arg-type]
    # Two sessions and a preview queued in one loop turn, then one that waits for them all.
    assert await b.send("s", [action(1)], wait=False) == 1
    assert await b.send("t", [action(2)], partial=True, wait=False) == 1
    assert await b.send("s", [action(3)]) == 2
    assert outbox.inserts == [[1, 1, 2]]  # one INSERT, in send order
    assert [(topic, dests) for topic, _, dests in packets] == [(TOPIC_ACTIONS, ["ann", "bob"])]
    batch = EnvelopeBatch.model_validate_json(packets[0][1])
    assert [(e.session_id, e.seq, bool(e.partial)) for e in batch.envelopes] == [
        ("s", 1, False), ("t", 1, True), ("s", 2, False),
    ]  # fmt: skip
    # Each envelope is pending (and acked) on its own, as if it had come alone.
    assert b.unacked("ann") == 3
    b.on_ack("ann", Ack(session_id="t", seq=1, applied=["a2"], applied_at=0))
    assert b.unacked("ann") == 2
    # A send alone goes as a plain envelope.
    await b.send("s", [action(4)])
    assert packets[-1][0] == TOPIC_ACTION
    assert ActionEnvelope.model_validate_json(packets[-1][1]).seq == 3


async def test_a_failed_flush_reaches_the_next_send_and_leaves_no_gap() -> None:
    sent: list[int] = []

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        sent.append(ActionEnvelope.model_validate_json(payload).seq)

    outbox = _MemoryOutbox()
    real = outbox.append_many
    down = [True]

    async def append_many(room_id: str, rows: list[OutboxRow], **kw: Any) -> None:
        if down[0]:
            raise OSError("Postgres is away")
        await real(room_id, rows, **kw)

    outbox.append_many = append_many  # type: ignore[method-assign]
    b = Broadcaster("r", publish, outbox, lambda: ["ann"])  # type: ignore[arg-type]
    await b.send("s", [action(1)], wait=False)
    await asyncio.sleep(0)  # the flush runs and fails: nothing was published
    await asyncio.sleep(0)
    down[0] = False
    with pytest.raises(OSError):
        await b.send("s", [action(2)])
    assert await b.send("s", [action(2)]) == 1  # renumbered from the outbox: no gap
    assert sent == [1] and [r.seq for r in outbox.rows] == [1]


async def test_acks_for_what_was_never_sent_are_dropped() -> None:
    now = [0.0]

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        return None

    b = await _two_sent(publish, now)

    def ack(who: str, session: str, seq: int) -> str | None:
        return b.on_ack(who, Ack(session_id=session, seq=seq, applied=[], applied_at=0))

    assert ack("ann", "s", 1) is None
    assert ack("ann", "s", 1) is None  # a duplicate's ack again: it was sent
    assert ack("ann", "s", 3) == "unsent_seq"
    assert ack("ann", "nope", 1) == "unknown_session"
    assert ack("eve", "s", 1) == "unknown_session"  # never sent anything
    assert len(b._ack_rows) == 2


async def test_an_idle_browser_is_judged_from_its_oldest_unacked_send() -> None:
    now = [0.0]

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        return None

    b = await _two_sent(publish, now)
    for who in ("ann", "bob"):
        for seq in (1, 2):
            b.on_ack(who, Ack(session_id="s", seq=seq, applied=[], applied_at=0))
    now[0] += 120.0  # both think for two minutes between prompts
    await b.send("s", [action(3)])
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    now[0] += 0.1
    await b._retransmit_due()
    # Nobody is unresponsive: the envelope is 0.1 s old; its pending copies are kept.
    assert b.unacked("ann") == 1 and b.unacked("bob") == 1
    b.on_ack("ann", Ack(session_id="s", seq=3, applied=[], applied_at=0))
    for _ in range(700):  # bob never acks: given up once its oldest send is over 60 s old
        now[0] += 0.1
        await b._retransmit_due()
    assert b.unacked("bob") == 0


def test_envelopes_travel_in_packets_under_the_batch_limit_in_order() -> None:
    sizes = [100, 5_000, 9_000, 1_500, 15_000, 300, 400]
    payloads = [
        ActionEnvelope(
            session_id="s", seq=i + 1, ts=0,
            actions=[WireAction(id=f"a{i}", name="think", params={"text": "x" * n})],
        ).to_wire()
        for i, n in enumerate(sizes)
    ]  # fmt: skip
    out = frames(payloads)
    assert len(out) >= 3 and any(end - start == 1 for start, end, _ in out)
    seqs = []
    for start, end, frame in out:
        assert len(frame) <= MAX_BATCH_BYTES
        if end < len(payloads):  # greedy: the next envelope would not have fitted
            assert len(frame) + len(payloads[end]) + 16 > MAX_BATCH_BYTES
        topic = TOPIC_ACTION if end - start == 1 else TOPIC_ACTIONS
        if topic == TOPIC_ACTIONS:
            EnvelopeBatch.model_validate_json(frame)  # the schema the browsers get
        seqs += [env["seq"] for env in envelopes_in(topic, frame)]
    assert seqs == list(range(1, len(sizes) + 1))


async def test_a_cumulative_ack_covers_every_envelope_up_to_its_seq() -> None:
    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        return None

    b = await _two_sent(publish, [0.0])
    await b.send("s", [action(3)])
    await b.send("t", [action(4)])
    ack = Ack(session_id="s", seq=2, applied=["a1", "a2"], applied_at=0, cumulative=True)
    assert b.on_ack("ann", ack) is None
    assert sorted(b._pending["ann"]) == [("s", 3), ("t", 1)]  # later seqs, other sessions stay
    rows = [(r.session_id, r.seq, r.applied_json) for r in b._ack_rows]
    assert rows == [("s", 1, "[]"), ("s", 2, '["a1", "a2"]')]  # a row per envelope covered
    # Beyond what was sent to them it is refused like any ack.
    ack = Ack(session_id="s", seq=4, applied=[], applied_at=0, cumulative=True)
    assert b.on_ack("ann", ack) == "unsent_seq"
    assert b.on_ack("bob", Ack(session_id="s", seq=1, applied=[], applied_at=0)) is None
    assert b.unacked("bob") == 3  # a plain ack covers its own seq only
