"""Raw LiveKit data delivery, measured in the same run as `bench latency`'s actions.

The steward's own participant publishes probe packets straight through `ffi_router.publish`
(the call the broadcaster's envelopes take): reliable, to the same clients, an action
envelope's size, on a bench topic the steward's logic never sees. No outbox, sanitizer or
ordering sits on the way; each client timestamps a probe in its data callback. Probes go out
only while action envelopes are flowing, so both meet the same load; `against_raw` then says
how far the steward's figures are from what LiveKit alone delivers.

`cpu_floor` measures the other limit, CPU: the same participant publishes envelope-sized
probes that ask for an echo, and each client answers one ack-sized packet, which is what an
envelope costs the steward in LiveKit alone (one publish to the room's clients, one ack
from each). Its CPU per probe is the floor under `steward_cpu_ms_per_envelope`.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import Callable
from typing import Any

from livekit import rtc

from steward import ffi_router
from steward_tools.bench.harness import Marks, percentiles
from steward_tools.process_usage import busiest_threads, self_cpu_s, thread_cpu_s
from steward_tools.rigs.raw_probe import ECHO_BYTES, RAW_TOPIC, probe_id, probe_payload

PROBE_EVERY_S = 0.05
# A probe goes out only when an action envelope was handed to LiveKit this recently.
BUSY_WINDOW_S = 0.25
ENVELOPE_BYTES = 600  # the probe size until the run has published an envelope
RATIO_TARGETS = {"e2e_over_raw": 1.5, "overhead_over_raw": 0.25}


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


async def cpu_floor(
    rooms: list[tuple[rtc.Room, list[str]]],
    *,
    probes: int,
    every_s: float,
    size: int = ENVELOPE_BYTES,
    idle_share: float = 0.0,
    timeout_s: float = 60.0,
) -> dict[str, Any]:
    """This process's CPU for `probes` echoed probes per room, all rooms at once (each room
    one probe per `every_s`, staggered): `raw_cpu_ms_per_packet` is one probe's cost (its
    publish to the room's clients and their echoes), above the rooms' idle cost
    (`idle_share` cores, measured before) when given."""
    echoes = [0]
    wanted = sum(len(to) for _, to in rooms) * probes
    got_all = asyncio.Event()

    def on_data(packet: rtc.DataPacket) -> None:
        if packet.topic == RAW_TOPIC and probe_id(packet.data) is not None:
            echoes[0] += 1
            if echoes[0] >= wanted:
                got_all.set()

    for room, _ in rooms:
        room.on("data_received", on_data)
    pending: list[asyncio.Future[None]] = []

    async def send(k: int, room: rtc.Room, to: list[str]) -> None:
        await asyncio.sleep(every_s * k / max(1, len(rooms)))
        for n in range(probes):
            payload = probe_payload(f"f{k}-{n}", size, echo=True)
            pending.append(
                ffi_router.publish(
                    room.local_participant, payload, topic=RAW_TOPIC, destinations=to
                )
            )
            await asyncio.sleep(every_s)

    threads0, cpu0, t0 = thread_cpu_s(), self_cpu_s(), time.monotonic()
    try:
        await asyncio.gather(*(send(k, r, to) for k, (r, to) in enumerate(rooms)))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(got_all.wait(), timeout_s)
        wall, cpu, threads = time.monotonic() - t0, self_cpu_s() - cpu0, thread_cpu_s()
    finally:
        for room, _ in rooms:
            room.off("data_received", on_data)
        for done in pending:
            done.add_done_callback(_drop_result)
    sent = probes * len(rooms)
    busy = max(0.0, cpu - idle_share * wall)
    return {
        "raw_probes_sent": sent,
        "raw_echoes": echoes[0],
        "raw_echoes_wanted": wanted,
        "raw_probe_bytes": size,
        "raw_echo_bytes": ECHO_BYTES,
        "raw_wall_s": round(wall, 2),
        "raw_cpu_s": round(cpu, 2),
        "raw_cpu_ms_per_packet": round(busy * 1000 / sent, 3) if sent else None,
        "raw_cpu_s_by_thread": busiest_threads(threads0, threads, top=5, digits=2),
    }
