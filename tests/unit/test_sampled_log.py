"""Sampled refusal lines: a flood costs a few lines, and every refusal is counted in one."""

from __future__ import annotations

from typing import Any

import pytest

from steward.obs.sampled_log import SampledLog
from tests.support.clock import LoopClock


class _Lines:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append({"event": event, **fields})


async def test_held_back_refusals_are_counted_when_their_window_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = LoopClock(monkeypatch)
    out = _Lines()
    sampled = SampledLog(out, interval_s=0.05, burst=2, clock=clock.now)
    for _ in range(5):
        sampled.warning(("eve", "prompt"), "prompt_refused", reason="no grant")
    assert [line["count"] for line in out.lines] == [1, 1]
    await clock.advance(0.04)
    assert [line["count"] for line in out.lines] == [1, 1]  # the window is still open
    await clock.advance(0.02)  # no later refusal: the window's end writes the held-back three
    assert [line["count"] for line in out.lines] == [1, 1, 3]
    assert sum(line["count"] for line in out.lines) == 5
    assert sampled.lines == 3


async def test_a_later_line_that_carried_the_count_is_not_repeated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = LoopClock(monkeypatch)
    now = [0.0]
    out = _Lines()
    sampled = SampledLog(out, interval_s=0.05, burst=1, clock=lambda: now[0])
    sampled.warning(("k",), "inbound_rejected", reason="oversize")
    sampled.warning(("k",), "inbound_rejected", reason="oversize")  # held back
    now[0] = 1.0  # a new window: this line carries the held-back one
    sampled.warning(("k",), "inbound_rejected", reason="oversize")
    await clock.advance(0.1)  # the first window's end is past: its flush found nothing held
    assert [line["count"] for line in out.lines] == [1, 2]
