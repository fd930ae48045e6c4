"""The inbound budget and the sampled refusal log, on a fake clock."""

from __future__ import annotations

from typing import Any

from steward.obs.sampled_log import SampledLog
from steward.room.inbound.budget import (
    BURST_BYTES_PER_STRIKE,
    BYTES_PER_STRIKE,
    UNREAD_BYTES_PER_STRIKE,
    InboundBudget,
)
from steward.room.outbound.delivery.resync_gate import ResyncGate


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_over_the_budget_every_arrival_strikes_by_its_size_and_the_window_slides() -> None:
    clock = Clock()
    strikes: list[tuple[str, str, int]] = []
    budget = InboundBudget(
        lambda who, why, weight: strikes.append((who, why, weight)),
        bytes_per_window=100_000,
        packets_per_window=10,
        clock=clock,
    )
    assert budget.charge("eve", 60_000) and budget.charge("eve", 40_000)
    assert not budget.charge("eve", 5 << 20)
    assert strikes == [("eve", "over_budget_data", 1 + (5 << 20) // BYTES_PER_STRIKE)]
    assert budget.charge("ann", 1_000)  # another participant's budget is her own
    clock.now = 11.0  # the window slid past all of it
    assert budget.charge("eve", 1)
    for _ in range(9):
        budget.charge("eve", 0)
    assert not budget.charge("eve", 0)  # the 11th packet in 10 s
    assert strikes[-1] == ("eve", "over_budget_data", 1)
    budget.forget("eve")
    assert budget.usage("eve") == (0, 0)


def test_a_burst_over_the_allowance_strikes_per_kib_and_a_paced_sender_never_does() -> None:
    clock = Clock()
    strikes: list[tuple[str, str, int]] = []
    budget = InboundBudget(
        lambda who, why, weight: strikes.append((who, why, weight)),
        bytes_per_window=2 << 20,
        packets_per_window=2000,
        burst_bytes=512 << 10,
        clock=clock,
    )
    # A paste: a few hundred KiB at once, under the allowance.
    for _ in range(8):
        assert budget.charge("ann", 48_000)
    # A flood of 60 kB packets: past the allowance within the first second, each packet then
    # weighs a strike per KiB (the guard's 200 a minute within four packets).
    taken = [budget.charge("ugo", 60_000) for _ in range(12)]
    assert taken == [True] * 8 + [False] * 4
    assert strikes == [("ugo", "over_budget_data", 1 + 60_000 // BURST_BYTES_PER_STRIKE)] * 4
    assert sum(w for _, _, w in strikes) > 200
    # The allowance is per second: the same bytes paced over the window pass (under the
    # 10 s budget), and so does the next burst once a second has gone by.
    strikes.clear()
    for second in range(1, 5):
        clock.now = 20.0 + second * 1.01
        for _ in range(8):
            assert budget.charge("bob", 48_000)
    assert strikes == []


class Lines:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def info(self, event: str, **fields: Any) -> None:
        self.lines.append({"event": event, **fields})

    warning = info


def test_repeated_refusals_are_a_burst_then_one_line_with_a_count_per_interval() -> None:
    clock, out = Clock(), Lines()
    sampled = SampledLog(out, interval_s=5.0, burst=2, clock=clock)
    for _ in range(1000):
        sampled.info(("mal", "no grant"), "prompt_refused", participant="mal")
    sampled.info(("eve", "no grant"), "prompt_refused", participant="eve")
    assert [(x["participant"], x["count"]) for x in out.lines] == [
        ("mal", 1),
        ("mal", 1),
        ("eve", 1),
    ]
    clock.now = 6.0
    sampled.info(("mal", "no grant"), "prompt_refused", participant="mal")
    assert out.lines[-1]["count"] == 999  # the 998 unlogged and this one


def test_a_replayed_participant_owes_an_ack_before_the_next_replay() -> None:
    gate = ResyncGate()
    assert not gate.owes_ack("nick")
    gate.replayed("nick")
    assert gate.owes_ack("nick")
    gate.acked("nick")
    assert not gate.owes_ack("nick")
    gate.replayed("nick")
    gate.forget("nick")
    assert not gate.owes_ack("nick")


def test_unread_bytes_have_their_own_small_allowance_and_strike_by_the_128_bytes() -> None:
    clock = Clock()
    strikes: list[tuple[str, str, int]] = []
    budget = InboundBudget(
        lambda who, why, weight: strikes.append((who, why, weight)),
        bytes_per_window=2 << 20,
        packets_per_window=2000,
        burst_bytes=512 << 10,
        unread_burst_bytes=32 << 10,
        clock=clock,
    )
    assert budget.charge("ann", 300_000)  # read: under the general allowance
    assert budget.charge("eve", 30_000, unread=True)
    assert not budget.charge("eve", 15_000, unread=True)  # past 32 KiB within the second
    assert strikes == [("eve", "over_budget_unread", 1 + 15_000 // UNREAD_BYTES_PER_STRIKE)]
    assert budget.usage("eve") == (45_000, 2)  # unread bytes count in the budget as well
    clock.now = 1.5  # the second slid past them
    assert budget.charge("eve", 30_000, unread=True)
    assert "eve" in budget and "bob" not in budget
