"""Raw LiveKit data delivery, measured in the same run as `bench latency`'s actions.

The steward's own participant publishes probe packets straight through `ffi_router.publish`
(the call the broadcaster's envelopes take): reliable, to the same clients, an action
envelope's size, on a bench topic the steward's logic never sees. No outbox, sanitizer or
ordering sits on the way; each client timestamps a probe in its data callback. Probes go out
only while action envelopes are flowing, so both meet the same load; `against_raw` then says
how far the steward's figures are from what LiveKit alone delivers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from livekit import rtc

from steward import ffi_router
from steward_tools.bench.harness import Marks, percentiles

RAW_TOPIC = "bench:raw"  # shaped like the protocol's topics; no client logic handles it
PROBE_EVERY_S = 0.05
# A probe goes out only when an action envelope was handed to LiveKit this recently.
BUSY_WINDOW_S = 0.25
ENVELOPE_BYTES = 600  # the probe size until the run has published an envelope
RATIO_TARGETS = {"e2e_over_raw": 1.5, "overhead_over_raw": 0.25}


def probe_payload(probe_id: str, size: int) -> bytes:
    """A JSON packet of `size` bytes (at least its id) carrying `probe_id`."""
    bare = json.dumps({"probe": probe_id, "pad": ""})
    return json.dumps({"probe": probe_id, "pad": "x" * max(0, size - len(bare))}).encode()


def probe_id(payload: bytes) -> str | None:
    try:
        value = json.loads(payload).get("probe")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def slowest_delivery_ms(
    sent: dict[str, float], received: dict[str, dict[str, float]]
) -> tuple[list[float], int]:
    """Per probe: published → in every client's data callback (the slowest, as `e2e_ms`
    takes the slowest client); and the count of probes some client never got."""
    out, missing = [], 0
    for pid, t0 in sent.items():
        times = [r.get(pid) for r in received.values()]
        if not times or any(t is None for t in times):
            missing += 1
            continue
        out.append((max(t for t in times if t is not None) - t0) * 1000)
    return out, missing


def ratio(numerator: Any, denominator: Any) -> float | None:
    """p95 over p95 (rounded to 0.01); None when either side has no figure."""
    if not isinstance(numerator, int | float) or not isinstance(denominator, int | float):
        return None
    if denominator <= 0:
        return None
    return round(numerator / denominator, 2)


def against_raw(figures: dict[str, Any], raw: list[float], missing: int) -> dict[str, Any]:
    """`raw_ms` and the steward's p95s over raw's p95, from a run's `overhead_ms`/`e2e_ms`."""
    raw_ms = percentiles(raw)
    return {
        "raw_ms": raw_ms,
        "raw_not_delivered_everywhere": missing,
        "e2e_over_raw": ratio(figures.get("e2e_ms", {}).get("p95"), raw_ms["p95"]),
        "overhead_over_raw": ratio(figures.get("overhead_ms", {}).get("p95"), raw_ms["p95"]),
    }


class RawProbes:
    """Publishes probes from the steward's participant while the run's envelopes flow."""

    def __init__(
        self,
        participant: rtc.LocalParticipant,
        marks: Marks,
        destinations: Callable[[], list[str]],
        *,
        every_s: float = PROBE_EVERY_S,
    ) -> None:
        self.participant = participant
        self.marks = marks
        self.destinations = destinations
        self.every_s = every_s
        self.sent: dict[str, float] = {}
        self.sizes: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def envelope_bytes(self) -> int:
        """The median size of the last packets handed to LiveKit (partial envelopes included:
        they are most of what the data channel carries)."""
        recent = [len(p) for _, _, p in self.marks.publishes[-50:]]
        return int(statistics.median(recent)) if recent else ENVELOPE_BYTES

    def _busy(self) -> bool:
        last = self.marks.publishes[-1][0] if self.marks.publishes else None
        return last is not None and time.monotonic() - last < BUSY_WINDOW_S

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every_s)
            to = self.destinations()
            if not to or not self._busy():
                continue
            pid = f"r{len(self.sent)}"
            payload = probe_payload(pid, self.envelope_bytes())
            t0 = time.monotonic()
            done = ffi_router.publish(self.participant, payload, topic=RAW_TOPIC, destinations=to)
            self.sent[pid] = t0
            self.sizes.append(float(len(payload)))
            done.add_done_callback(_drop_result)

    def figures(self) -> dict[str, Any]:
        return {"raw_probes": len(self.sent), "raw_probe_bytes": percentiles(self.sizes)}


def _drop_result(done: asyncio.Future[None]) -> None:
    # A failed probe shows as not delivered; retrieving the error keeps asyncio quiet.
    if not done.cancelled():
        done.exception()
