"""The headless client's delayed cumulative acks (the bridge's `executor/acks.ts`)."""

from __future__ import annotations

import pytest

from steward.protocol.limits import MAX_ACKED_IDS
from steward.protocol.messages import Ack
from steward_tools.headless.acks import AckCoalescer
from tests.support.clock import LoopClock

DELAY = 0.05


def ack(session: str, seq: int, applied: list[str] | None = None) -> Ack:
    return Ack(session_id=session, seq=seq, applied=applied or [f"a{seq}"], applied_at=seq)


async def test_acks_of_one_delay_leave_as_one_cumulative_ack_per_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = LoopClock(monkeypatch)
    sent: list[Ack] = []
    acks = AckCoalescer(sent.append, DELAY)
    acks.add(ack("s", 1))
    acks.add(ack("t", 1))
    acks.add(ack("s", 2))
    await clock.advance(DELAY * 0.9)
    assert sent == []  # held until the delay is up
    await clock.advance(DELAY * 0.2)
    assert [(a.session_id, a.seq, a.cumulative, a.applied) for a in sent] == [
        ("s", 2, True, ["a1", "a2"]),
        ("t", 1, None, ["a1"]),
    ]
    acks.add(ack("s", 3))  # the end of the next burst is acked too
    await clock.advance(DELAY * 1.1)
    assert [(a.seq, a.cumulative) for a in sent[2:]] == [(3, None)]


async def test_an_ack_past_the_id_limit_sends_the_held_one_first() -> None:
    sent: list[Ack] = []
    acks = AckCoalescer(sent.append, 60.0)
    acks.add(ack("s", 1, [f"x{i}" for i in range(MAX_ACKED_IDS - 1)]))
    acks.add(ack("s", 2, ["y0", "y1"]))
    assert [(a.seq, len(a.applied)) for a in sent] == [(1, MAX_ACKED_IDS - 1)]
    acks.flush()
    assert [(a.seq, len(a.applied)) for a in sent] == [(1, MAX_ACKED_IDS - 1), (2, 2)]
    acks.flush()
    assert len(sent) == 2


async def test_a_closed_coalescer_sends_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client leaving closes it: an armed timer must not send into the room it left."""
    clock = LoopClock(monkeypatch)
    sent: list[Ack] = []
    acks = AckCoalescer(sent.append, DELAY)
    acks.add(ack("s", 1))
    acks.close()
    acks.add(ack("s", 2))  # an envelope applied while leaving
    await clock.advance(DELAY * 2)  # both timers' moments are past
    assert sent == []
