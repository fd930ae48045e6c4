"""Sampled refusal lines: a flood costs a few lines, and every refusal is counted in one."""

from __future__ import annotations

import asyncio
from typing import Any

from steward.obs.sampled_log import SampledLog


class _Lines:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append({"event": event, **fields})


async def test_held_back_refusals_are_counted_when_their_window_ends() -> None:
    out = _Lines()
    sampled = SampledLog(out, interval_s=0.05, burst=2)
    for _ in range(5):
        sampled.warning(("eve", "prompt"), "prompt_refused", reason="no grant")
    assert [line["count"] for line in out.lines] == [1, 1]
    await asyncio.sleep(0.15)  # no later refusal: the window's end writes the held-back three
    assert [line["count"] for line in out.lines] == [1, 1, 3]
    assert sum(line["count"] for line in out.lines) == 5
    assert sampled.lines == 3


async def test_a_later_line_that_carried_the_count_is_not_repeated() -> None:
    now = [0.0]
    out = _Lines()
    sampled = SampledLog(out, interval_s=0.05, burst=1, clock=lambda: now[0])
    sampled.warning(("k",), "inbound_rejected", reason="oversize")
    sampled.warning(("k",), "inbound_rejected", reason="oversize")  # held back
    now[0] = 1.0  # a new window: this line carries the held-back one
    sampled.warning(("k",), "inbound_rejected", reason="oversize")
    await asyncio.sleep(0.1)
    assert [line["count"] for line in out.lines] == [1, 2]
