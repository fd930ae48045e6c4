"""The broadcaster: bounded retransmits, resyncs from the outbox, seqs never reused, acks."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from steward.protocol.messages import Ack, ActionEnvelope, EnvelopeBatch
from steward.protocol.names import TOPIC_ACTION, TOPIC_ACTIONS
from steward.room.outbound.broadcaster import Broadcaster
from steward.room.outbound.envelopes import envelopes_in
from steward.store.outbox import OutboxRow
from tests.support.outbox_fakes import MemoryOutbox, StallingOutbox
from tests.support.wire import text_action as action


def _to_ann_and_bob(publish: Any, now: list[float], attempts: int = 2) -> Broadcaster:
    """A broadcaster to ann and bob with a 0.1 s RTO floor, on the clock `now`."""
    return Broadcaster(
        "r",
        publish,
        MemoryOutbox(),  # type: ignore[arg-type]
        lambda: ["ann", "bob"],
        retransmit_after_s=0.1,
        retransmit_attempts=attempts,
        clock=lambda: now[0],
    )


async def _two_sent(publish: Any, now: list[float]) -> Broadcaster:
    """A broadcaster to ann and bob (RTO floor 0.1 s, 2 retransmits) that sent seq 1 and 2."""
    b = _to_ann_and_bob(publish, now)
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
        await b.retransmit_due()
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
        await b.retransmit_due()
    assert b.stats("s").resyncs == 0 and b.unacked("bob") == 2
    down[0] = False
    for _ in range(50):
        now[0] += 0.1
        await b.retransmit_due()
    # The replay came once Postgres was back (the trailing seq 2 included), and only once.
    assert b.stats("s").resyncs == 1
    assert Counter(seq for seq, d in sent if d == ["bob"]) == {1: 3, 2: 3}


async def test_a_send_whose_caller_is_cancelled_mid_insert_is_finished_in_order() -> None:
    sent: list[int] = []

    def publish(payload: bytes, *, topic: str, destinations: list[str]) -> asyncio.Future[None]:
        sent.append(ActionEnvelope.model_validate_json(payload).seq)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    outbox = StallingOutbox(stall_at=2)
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

    outbox = MemoryOutbox()
    b = Broadcaster("r", publish, outbox, lambda: ["ann", "bob"])  # type: ignore[arg-type]
    # Two sessions and a preview queued in one loop turn, then one that waits for them all.
    assert await b.send("s", [action(1)], wait=False) == 1
    assert await b.send("t", [action(2)], partial=True, wait=False) == 1
    assert await b.send("s", [action(3)]) == 2
    assert outbox.inserts == [[1, 1, 2]]  # one INSERT, in send order
    assert [(topic, dests) for topic, _, dests in packets] == [(TOPIC_ACTIONS, ["ann", "bob"])]
    batch = EnvelopeBatch.model_validate_json(packets[0][1])
    assert [(e.session_id, e.seq, bool(e.partial)) for e in batch.envelopes] == [
        ("s", 1, False),
        ("t", 1, True),
        ("s", 2, False),
    ]
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

    outbox = MemoryOutbox()
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
    assert b.acks_unflushed == 2


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
    await b.retransmit_due()
    # Nobody is unresponsive: the envelope is 0.1 s old; its pending copies are kept.
    assert b.unacked("ann") == 1 and b.unacked("bob") == 1
    b.on_ack("ann", Ack(session_id="s", seq=3, applied=[], applied_at=0))
    for _ in range(700):  # bob never acks: given up once its oldest send is over 60 s old
        now[0] += 0.1
        await b.retransmit_due()
    assert b.unacked("bob") == 0


async def test_a_cumulative_ack_covers_every_envelope_up_to_its_seq() -> None:
    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        return None

    b = await _two_sent(publish, [0.0])
    await b.send("s", [action(3)])
    await b.send("t", [action(4)])
    ack = Ack(session_id="s", seq=2, applied=["a1", "a2"], applied_at=0, cumulative=True)
    assert b.on_ack("ann", ack) is None
    assert b.unacked("ann") == 2  # s 3 and t 1 stay: later seqs, other sessions
    assert b.acks_unflushed == 2  # a row per envelope covered (s 1 and 2)
    # Beyond what was sent to them it is refused like any ack.
    ack = Ack(session_id="s", seq=4, applied=[], applied_at=0, cumulative=True)
    assert b.on_ack("ann", ack) == "unsent_seq"
    assert b.on_ack("bob", Ack(session_id="s", seq=1, applied=[], applied_at=0)) is None
    assert b.unacked("bob") == 3  # a plain ack covers its own seq only


async def test_an_actions_previews_are_paced_its_first_and_final_never_held() -> None:
    now = [0.0]
    seqs: list[tuple[int, bool]] = []

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        seqs.extend((e["seq"], bool(e.get("partial"))) for e in envelopes_in(topic, payload))

    b = Broadcaster(
        "r",
        publish,
        MemoryOutbox(),  # type: ignore[arg-type]
        lambda: ["ann"],
        clock=lambda: now[0],
        preview_interval_s=0.2,
    )
    assert await b.send("s", [action(1)], partial=True) == 1  # the first preview: at once
    b.on_ack("ann", Ack(session_id="s", seq=1, applied=["a1"], applied_at=0))
    now[0] = 0.1
    assert await b.send("s", [action(1)], partial=True) == 1  # acked, but 0.1 s after: held
    assert await b.send("s", [action(2)], partial=True) == 2  # another action's first
    b.on_ack("ann", Ack(session_id="s", seq=2, applied=["a2"], applied_at=0))
    now[0] = 0.25
    assert await b.send("s", [action(1)], partial=True) == 3  # the interval passed
    now[0] = 0.26
    assert await b.send("s", [action(1)]) == 4  # a final is never held
    stats = b.stats("s")
    assert stats.previews_coalesced == stats.previews_paced == 1
    assert seqs == [(1, True), (2, True), (3, True), (4, False)]
    # No pacing: an acked predecessor lets the next preview go at once.
    b.preview_interval_s = 0.0
    assert await b.send("s", [action(2)], partial=True) == 5


async def test_a_peer_whose_acks_lag_is_not_sent_every_envelope_again() -> None:
    """Bob acks each envelope 1 s after it was sent (a loaded browser), ann at once. The
    timeout must grow to his round trip: without Karn's backed-off timer every envelope
    was resent to him 3 times before its ack came, so none was ever timed."""
    now = [0.0]
    resent: Counter[str] = Counter()
    sent_at: dict[int, float] = {}

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        for env in envelopes_in(topic, payload):
            if env["seq"] in sent_at:
                resent.update(destinations)
            else:
                sent_at[env["seq"]] = now[0]

    b = _to_ann_and_bob(publish, now, attempts=3)
    acked: set[int] = set()
    for tick in range(1500):  # 30 s in 20 ms ticks, an envelope every 100 ms for 20 s
        now[0] = tick * 0.02
        if tick % 5 == 0 and tick < 1000:
            await b.send("s", [action(tick)])
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            b.on_ack("ann", Ack(session_id="s", seq=len(sent_at), applied=[], applied_at=0))
        for seq, at in sent_at.items():
            if seq not in acked and now[0] >= at + 1.0:
                acked.add(seq)
                b.on_ack("bob", Ack(session_id="s", seq=seq, applied=[], applied_at=0))
        await b.retransmit_due()
    assert len(sent_at) == 200 and len(acked) == 200
    assert resent["ann"] == 0
    assert resent["bob"] <= 20, resent  # the first few, while the timeout grows
    assert b.unacked("bob") == 0


async def test_a_session_minted_here_reads_no_seq_and_another_reads_it_once() -> None:
    class CountingOutbox(MemoryOutbox):
        def __init__(self) -> None:
            super().__init__()
            self.reads: list[str] = []

        async def max_seq(self, session_id: str) -> int:
            self.reads.append(session_id)
            return await super().max_seq(session_id)

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        pass

    outbox = CountingOutbox()
    outbox.rows.append(OutboxRow("old", 7, 1, False, "{}"))  # a session a dead steward left
    b = Broadcaster("r", publish, outbox, lambda: ["ann"])  # type: ignore[arg-type]
    b.new_session("new")
    assert await b.send("new", [action(1)]) == 1
    assert await b.send("new", [action(2)]) == 2
    assert await b.send("old", [action(3)]) == 8  # numbered after what the outbox holds
    assert await b.send("old", [action(4)]) == 9
    assert outbox.reads == ["old"]


async def test_a_leaving_hosts_unacked_envelopes_go_to_the_next_host_in_order() -> None:
    """Host mode: the new host gets what the old one never acked, and only that."""
    now = [0.0]
    sent: list[tuple[int, list[str]]] = []
    hosts = ["ann"]

    async def publish(payload: bytes, *, topic: str, destinations: list[str]) -> None:
        sent.extend((env["seq"], list(destinations)) for env in envelopes_in(topic, payload))

    b = Broadcaster(
        "r",
        publish,
        MemoryOutbox(),  # type: ignore[arg-type]
        lambda: hosts,
        retransmit_after_s=0.1,
        clock=lambda: now[0],
    )
    for seq in (1, 2, 3):
        await b.send("s", [action(seq)])
    b.on_ack("ann", Ack(session_id="s", seq=1, applied=["a1"], applied_at=0))
    b.forget("ann", keep_unacked=True)  # ann left while she was the host
    hosts[:] = ["bob"]
    assert b.hand_over("ann", "bob") == 2
    await asyncio.sleep(0)
    assert sent[3:] == [(2, ["bob"]), (3, ["bob"])]
    assert b.unacked("bob") == 2 and b.unacked("ann") == 0
    assert b.hand_over("ann", "bob") == 0, "handed over once"
