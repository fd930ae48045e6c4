"""The broadcaster: bounded retransmits, resyncs from the outbox, seqs never reused, acks."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from steward.protocol.messages import Ack, ActionEnvelope
from steward.room.broadcaster import Broadcaster
from steward.store.outbox import OutboxRow
from tests.support.outbox_fakes import MemoryOutbox, StallingOutbox
from tests.support.wire import text_action as action


async def _two_sent(publish: Any, now: list[float]) -> Broadcaster:
    """A broadcaster to ann and bob (RTO floor 0.1 s, 2 retransmits) that sent seq 1 and 2."""
    b = Broadcaster(
        "r",
        publish,
        MemoryOutbox(),  # type: ignore[arg-type]
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
        env = ActionEnvelope.model_validate_json(payload)
        sent.append((env.session_id, env.seq, list(destinations)))

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
        sent.append((ActionEnvelope.model_validate_json(payload).seq, list(destinations)))

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


@pytest.mark.parametrize("commits", [True, False], ids=["committed", "not_committed"])
async def test_a_send_cancelled_mid_insert_is_finished_and_never_reuses_a_seq(
    commits: bool,
) -> None:
    sent: list[int] = []

    def publish(payload: bytes, *, topic: str, destinations: list[str]) -> asyncio.Future[None]:
        sent.append(ActionEnvelope.model_validate_json(payload).seq)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    outbox = StallingOutbox(stall_at=2, commits=commits)
    b = Broadcaster("r", publish, outbox, lambda: ["ann"])  # type: ignore[arg-type]
    await b.send("s", [action(1)])
    caller = asyncio.ensure_future(b.send("s", [action(2)]))
    await outbox.stalled.wait()
    caller.cancel()  # e.g. the user cancelled the run while seq 2 was being written
    with pytest.raises(asyncio.CancelledError):
        await caller
    # The revert that follows a cancel gets the next seq, after seq 2 was finished.
    assert await b.send("s", [action(3)]) == 3
    assert [r.seq for r in outbox.rows] == [1, 2, 3]
    assert sent == [1, 2, 3]
    assert b.stats("s").envelopes == 3 and b.stats("s").last_seq == 3


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
