"""How long the garbage collector stops the process, by generation.

A collection runs on the event loop's thread and holds every room of the process for its
duration; a gen-2 pass walks the whole heap, so its pause grows with the rooms served.
Prometheus' default collector counts collections, not their time: this measures the time.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import Histogram

GC_PAUSE = Histogram(
    "steward_gc_pause_seconds",
    "Time the garbage collector held the process, by generation",
    ["generation"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)


@dataclass
class GcPauses:
    """Per generation: collections, total and longest pause since the last `reset`."""

    count: dict[int, int] = field(default_factory=dict)
    total_s: dict[int, float] = field(default_factory=dict)
    max_s: dict[int, float] = field(default_factory=dict)
    _started_at: float | None = None

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        # A collection can start at any stack depth, even one frame short of the recursion
        # limit; an exception here would only surface as an unraisable warning, so that
        # sample is dropped instead.
        try:
            self._record(phase, info)
        except RecursionError:
            self._started_at = None

    def _record(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started_at = time.perf_counter()
            return
        if self._started_at is None:
            return
        took, self._started_at = time.perf_counter() - self._started_at, None
        gen = int(info.get("generation", 0))
        self.count[gen] = self.count.get(gen, 0) + 1
        self.total_s[gen] = self.total_s.get(gen, 0.0) + took
        self.max_s[gen] = max(self.max_s.get(gen, 0.0), took)
        GC_PAUSE.labels(generation=str(gen)).observe(took)

    def reset(self) -> None:
        self.count.clear()
        self.total_s.clear()
        self.max_s.clear()

    def summary(self) -> dict[str, dict[str, float]]:
        """{generation: {n, total_ms, max_ms}} since the last reset (benches print it)."""
        return {
            str(gen): {
                "n": n,
                "total_ms": round(self.total_s[gen] * 1000, 2),
                "max_ms": round(self.max_s[gen] * 1000, 2),
            }
            for gen, n in sorted(self.count.items())
        }


PAUSES = GcPauses()


def watch_gc_pauses() -> GcPauses:
    """Start timing collections (once per process); returns the process-wide record."""
    if PAUSES.callback not in gc.callbacks:
        gc.callbacks.append(PAUSES.callback)
    return PAUSES
