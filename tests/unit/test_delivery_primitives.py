"""The delivery primitives the broadcaster composes, each on its own, on a hand-moved clock."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from steward.protocol.messages import Ack
from steward.room.outbound.delivery.ack_clock import MAX_BACKOFF_S, AckClock
from steward.room.outbound.delivery.ack_tracker import AckTracker
from steward.room.outbound.delivery.flush_queue import FlushQueue, Queued
from steward.room.outbound.delivery.preview_pacer import PreviewPacer
from steward.room.outbound.delivery.retransmit_plan import (
    GIVE_UP_S,
    RETRANSMIT_BUDGET,
    plan_retransmits,
)
from steward.room.outbound.delivery.sequencer import Sequencer
from steward.store.outbox import Outbox
from tests.support.wire import text_action as action


class _Rows:
    """The two reads a sequencer makes, counted."""

    def __init__(self, seqs: dict[str, int], room_order: int) -> None:
        self.seqs, self.room_order, self.reads = seqs, room_order, 0

    async def max_seq(self, session_id: str) -> int:
        self.reads += 1
        return self.seqs.get(session_id, 0)

    async def max_room_order(self, room_id: str) -> int:
        return self.room_order


async def test_sequencer_continues_after_the_outbox_and_reads_it_once() -> None:
    rows = _Rows({"relay": 7}, room_order=40)
    seq = Sequencer(cast(Outbox, rows))
    await seq.start("r")
    assert await seq.last("relay") == 7
    assert seq.next("relay") == (8, 41)
    assert await seq.last("relay") == 8 and rows.reads == 1
    seq.new_session("fresh")  # minted here: no read
    assert seq.next("fresh") == (1, 42) and rows.reads == 1
    seq.renumber("relay")  # not persisted: the outbox says again
    assert await seq.last("relay") == 7 and rows.reads == 2
    assert seq.room_order == 42


def test_preview_pacer_holds_paced_and_unacked_previews_never_the_first() -> None:
    now = [0.0]
    pacer = PreviewPacer(0.2, lambda: now[0])
    a = [action(1)]
    delivered: set[int] = set()
    assert pacer.held("s", a, delivered.__contains__) is None  # the first is never held
    pacer.numbered("s", a, 1, partial=True)
    now[0] = 0.1
    assert pacer.held("s", a, delivered.__contains__) == "paced"
    now[0] = 0.5
    assert pacer.held("s", a, delivered.__contains__) == "unacked"
    delivered.add(1)
    assert pacer.held("s", a, delivered.__contains__) is None
    pacer.numbered("s", a, 2, partial=True)
    pacer.unsent({"s": 2})  # envelope 2 never persisted: its preview is forgotten
    assert pacer.held("s", a, set[int]().__contains__) is None
    pacer.numbered("s", a, 3, partial=True)
    pacer.numbered("s", a, 4, partial=False)  # the final ends the action's clock
    assert pacer.held("s", a, set[int]().__contains__) is None


def test_ack_tracker_refuses_what_was_never_sent_and_times_only_first_sends() -> None:
    tracker = AckTracker()
    ack = Ack(session_id="s", seq=2, applied=[], applied_at=0.0, cumulative=True)
    assert tracker.refusal("ann", ack) == "unknown_session"
    for seq in (1, 2, 3):
        tracker.track("ann", ("s", seq), b"x", now=1.0)
    assert tracker.refusal("ann", ack.model_copy(update={"seq": 4})) == "unsent_seq"
    assert tracker.refusal("ann", ack) is None
    assert tracker.take("ann", ack, now=1.3) == [("s", 1), ("s", 2)]
    assert tracker.unacked("ann") == 1 and tracker.unacked_in("s") == 1
    assert tracker.clock("ann", 0.0).srtt == pytest.approx(0.3)
    tracker.of("ann")[("s", 3)].attempts = 1  # retransmitted: Karn never times it
    tracker.take("ann", ack.model_copy(update={"seq": 3, "cumulative": None}), now=9.0)
    assert tracker.clock("ann", 0.0).srtt == pytest.approx(0.3)
    assert tracker.total() == 0 and not tracker.any_pending()


def test_ack_clock_backs_off_after_a_retransmit_until_a_timed_ack() -> None:
    clock = AckClock()
    assert clock.timeout(0.1) == pytest.approx(0.1)
    for _ in range(20):
        clock.timed_out()
    assert clock.timeout(0.1) == MAX_BACKOFF_S
    clock.sample(0.05)
    assert clock.backoff == 0 and clock.timeout(0.1) == pytest.approx(0.15)


def _sent(tracker: AckTracker, who: str, n: int, at: float) -> None:
    for seq in range(1, n + 1):
        tracker.track(who, ("s", seq), b"%d" % seq, now=at).sent = True


def test_retransmit_plan_resends_within_budget_then_resyncs_then_gives_up() -> None:
    tracker = AckTracker()
    _sent(tracker, "ann", RETRANSMIT_BUDGET + 5, at=0.0)
    tracker.clock("ann", 0.0)

    def plan(now: float) -> Any:
        return plan_retransmits(
            tracker, now, floor_s=0.1, attempts=1, owes_ack=lambda p: p == "mute"
        )

    assert plan(0.05).due == {}  # not due yet
    first = plan(0.2)
    assert len(first.due) == RETRANSMIT_BUDGET  # oldest first, the rest next pass
    assert min(first.due) == ("s", 1) and first.due[("s", 1)] == ["ann"]
    assert list(first.groups()) == [("ann",)]
    later = plan(10.0)  # the first ones ran out of retransmits: resync from the oldest
    assert later.resyncs == {("ann", "s"): 1}
    gone = plan(GIVE_UP_S + 1.0)
    assert [g.participant for g in gone.gave_up] == ["ann"] and tracker.unacked("ann") == 0


async def test_flush_queue_hands_a_failed_insert_to_its_waiter_or_the_next_send() -> None:
    unsent: list[list[int]] = []
    persisted: list[list[int]] = []

    async def persist(chunk: list[Queued]) -> None:
        if any(q.seq == 2 for q in chunk):
            raise OSError("postgres away")
        persisted.append([q.seq for q in chunk])

    async def hand_over(chunk: list[Queued]) -> None:
        return None

    tasks: set[asyncio.Task[None]] = set()

    def spawn(aw: Any) -> asyncio.Task[None]:
        task = asyncio.ensure_future(aw)
        tasks.add(task)
        return task

    queue = FlushQueue(persist, hand_over, lambda f, _e: unsent.append([q.seq for q in f]), spawn)

    def item(session: str, seq: int) -> Queued:
        return Queued(session, seq, seq, False, b"{}", 1)

    one = item("a", 1)
    queue.put(one)
    async with asyncio.timeout(5):
        await queue.flushed(one)
    assert persisted == [[1]]
    queue.put(item("b", 2))  # nobody waits: the next send of "b" raises it
    waited = item("a", 3)
    queue.put(waited)
    with pytest.raises(OSError):
        async with asyncio.timeout(5):
            await queue.flushed(waited)
    assert unsent == [[2, 3]]
    with pytest.raises(OSError):
        queue.raise_failed("b")
    queue.raise_failed("a")  # its sender already got it
    queue.raise_failed("b")  # raised once
    async with asyncio.timeout(5):
        await asyncio.gather(*tasks)


def test_a_participant_owing_an_ack_gets_its_replay_retransmitted_and_nothing_else() -> None:
    # A replay's copy lost on the way: without a retransmit the browser has nothing to ack
    # and keeps its gap for good (seen in bench faults --long after a steward restart).
    tracker = AckTracker()
    live = tracker.track("c2", ("s", 1), b"live", 0.0)
    replayed = tracker.track("c2", ("s", 2), b"replay", 0.0)
    live.sent = replayed.sent = replayed.replay = True
    tracker.clock("c2", 0.0)

    def plan(now: float) -> Any:
        return plan_retransmits(tracker, now, floor_s=0.1, attempts=1, owes_ack=lambda _: True)

    first = plan(0.5)
    assert list(first.due) == [("s", 2)] and first.due[("s", 2)] == ["c2"]
    assert live.attempts == 0  # the live copy waits for an ack like before
    again = plan(10.0)  # its retransmits ran out: no second replay for one that owes an ack
    assert again.due == {} and again.resyncs == {}
