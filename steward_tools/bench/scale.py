"""`steward bench scale --rooms N`: one steward process serving N rooms at once.

Each room has 2 headless clients (in a separate process, so the steward's CPU and RSS are
measured alone) and runs one prompt to the scripted model at 50 tokens/s, all rooms at the
same time. Reports the per-action overhead p95 across all rooms, the steward's CPU seconds
during the run, its RSS and the RSS growth per room. Target: 200 rooms with
overhead p95 <= 10 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from steward.commands.setup import print_json
from steward.obs import metrics
from steward.obs.gc_pauses import watch_gc_pauses
from steward.obs.logging import configure_logging
from steward_tools.bench.harness import (
    ClientProcess,
    Marks,
    Stack,
    percentiles,
    sampling,
    start_stack,
)
from steward_tools.bench.raw import cpu_floor, ratio
from steward_tools.bench.spy import Sampler
from steward_tools.process_usage import (
    busiest_threads,
    process_tree_cpu_s,
    self_cpu_s,
    self_rss_mb,
    thread_cpu_s,
)
from steward_tools.rigs.clients import canvas_hash
from steward_tools.waiting import bounded, wait_until

TARGET_OVERHEAD_P95_MS = 10.0
ROOMS_PER_CLIENT = 10
PROFILE_TOP = 5
IDLE_S = 5.0
# Echoed probes per room for the raw CPU floor, at about the run's envelope rate per room.
FLOOR_PROBES = 10
FLOOR_EVERY_S = 0.4


async def run(
    rooms: int, tokens_per_s: float = 50.0, prompts: int = 1, profile: Path | None = None
) -> dict[str, Any]:
    marks = Marks()
    stack = await start_stack(tokens_per_s=tokens_per_s, marks=marks)
    cps: list[ClientProcess] = []
    try:
        rss_base = self_rss_mb()
        names = [f"bench-scale-{uuid.uuid4().hex[:6]}-{i}" for i in range(rooms)]
        t0 = time.monotonic()
        sem = asyncio.Semaphore(8)

        async def join(name: str) -> Any:
            async with sem:
                return await stack.join(name)

        runtimes = await asyncio.gather(*(join(n) for n in names))
        join_s = time.monotonic() - t0
        extra: dict[str, Any] = {}
        if profile is not None:
            extra["profile"] = str(profile / f"clients-{rooms}.txt")
        # Browsers are processes of their own; one Python process holding 100+ SDK rooms
        # spends its time fanning every SDK event out to every room. Shards of ROOMS_PER_CLIENT.
        shards = [names[i : i + ROOMS_PER_CLIENT] for i in range(0, rooms, ROOMS_PER_CLIENT)]
        cps = [
            ClientProcess(
                stack,
                shard,
                per_room=2,
                prompts=prompts,
                timeout=120,
                connect_concurrency=max(1, 8 // len(shards)),
                **({"profile": f"{extra['profile']}.{k}"} if extra else {}),
            )
            for k, shard in enumerate(shards)
        ]
        await asyncio.gather(*(c.start(timeout=60 + rooms * 2) for c in cps))
        await wait_until(
            lambda: all(len(r.participants.appliers()) == 2 for r in runtimes),
            60 + rooms,
            "every room sees its clients",
        )
        rss_idle = self_rss_mb()
        # The rooms' fixed cost: every room joined, both clients in, nothing sent.
        idle_threads0 = thread_cpu_s()
        idle0 = self_cpu_s()
        idle_spy = Sampler(profile, f"steward-idle-{rooms}") if profile is not None else None
        await asyncio.sleep(IDLE_S)
        idle_share = (self_cpu_s() - idle0) / IDLE_S
        idle_by_thread = _shares(idle_threads0, thread_cpu_s(), IDLE_S)
        if idle_spy is not None:
            extra["steward_idle_profile"] = idle_spy.stop().summary(PROFILE_TOP)
        # LiveKit alone, same rooms and clients: the CPU floor under one envelope.
        floor = await cpu_floor(
            [(r.room, r.participants.appliers()) for r in runtimes],
            probes=FLOOR_PROBES,
            every_s=FLOOR_EVERY_S,
            idle_share=idle_share,
        )
        machine = _machine_pids(stack, cps)
        machine0 = {k: process_tree_cpu_s(pid) for k, pid in machine.items()}
        threads0 = thread_cpu_s()
        topics0 = metrics.packets_by_topic()
        gc_pauses = watch_gc_pauses()
        gc_pauses.reset()
        cpu0 = self_cpu_s()
        t1 = time.monotonic()
        sampler = Sampler(profile, f"steward-{rooms}") if profile is not None else None
        stop_sampling = await sampling(marks, stack.service.outbox.pool)
        try:
            parts = await asyncio.gather(*(c.go(timeout=180 + rooms * 3) for c in cps))
            result: dict[str, Any] = {
                "rooms": {k: v for part in parts for k, v in part["rooms"].items()},
                "cpu_s": round(sum(part.get("cpu_s") or 0 for part in parts), 2),
            }
        finally:
            await stop_sampling()
            # CPU figures are read before py-spy stops: writing its files is not the run.
            wall = time.monotonic() - t1
            cpu = self_cpu_s() - cpu0
            machine1 = {k: process_tree_cpu_s(pid) for k, pid in machine.items()}
            threads = thread_cpu_s()
            topics = metrics.packets_by_topic()
            gc_during_run = gc_pauses.summary()
            if sampler is not None:
                extra["steward_profile"] = {
                    "collapsed": str(sampler.collapsed),
                    "flamegraph": str(sampler.svg),
                    "phases": sampler.stop().summary(PROFILE_TOP),
                }
        machine_cpu = {k: round(v - machine0[k], 1) for k, v in machine1.items()}
        # The client processes have exited by now: they report their own CPU.
        machine_cpu = {k: v for k, v in machine_cpu.items() if not k.startswith("clients")}
        machine_cpu["clients"] = round(result["cpu_s"], 1)
        rss_peak = self_rss_mb()
        await asyncio.sleep(0.3)
        reports = result["rooms"]
        identical = all(
            c["canvas"] == canvas_hash(r.mirror.shapes)
            for r in runtimes
            for c in reports[r.room_id]["clients"].values()
        )
        statuses = [s for rep in reports.values() for s in rep["statuses"]]
        overhead_samples = marks.overhead_ms()
        overhead = percentiles(overhead_samples)
        streams = [st for r in runtimes for st in r.broadcaster.all_stats()]
        actions = len(overhead_samples)
        envelopes = sum(st.envelopes for st in streams)
        busy = max(0.0, cpu - idle_share * wall)
        per_envelope = busy * 1000 / envelopes if envelopes else None
        raw_ms = floor["raw_cpu_ms_per_packet"]
        envelope_bytes = [len(p) for _, _, p in marks.publishes]
        out: dict[str, Any] = {
            "rooms": rooms,
            "clients": rooms * 2,
            "tokens_per_s": tokens_per_s,
            "sessions_done": statuses.count("done"),
            "sessions": len(statuses),
            "statuses": dict(Counter(statuses)),
            "outcomes": dict(
                Counter(res.outcome for r in runtimes for res in r.sessions.results.values())
            ),
            "overhead_p95_ms": overhead["p95"],
            "overhead_ms": overhead,
            "steward_cpu_s": round(cpu, 2),
            "steward_cpu_share": round(cpu / wall, 2) if wall else None,
            # Per final action applied (the overhead samples) and per envelope first sent.
            "actions": actions,
            "envelopes": envelopes,
            "steward_cpu_ms_per_action": round(cpu * 1000 / actions, 2) if actions else None,
            "steward_cpu_ms_per_envelope": round(cpu * 1000 / envelopes, 3) if envelopes else None,
            "envelopes_per_action": round(envelopes / actions, 2) if actions else None,
            # Against LiveKit alone (`raw_floor`: echoed probes measured before the run), both
            # above the rooms' idle cost: what the steward adds to the SDK's cost per packet.
            "raw_floor": floor,
            "envelope_bytes_median": statistics.median(envelope_bytes) if envelope_bytes else None,
            "steward_busy_cpu_ms_per_envelope": round(per_envelope, 3) if per_envelope else None,
            "steward_over_raw_per_envelope": ratio(per_envelope, raw_ms),
            # The SDK's share of one action at this run's envelope count: a floor for the
            # steward's CPU per action whatever the steward itself does.
            "raw_floor_ms_per_action": (
                round(raw_ms * envelopes / actions, 2) if raw_ms and actions else None
            ),
            # What the joined rooms cost doing nothing for IDLE_S right after the clients
            # joined (LiveKit connections' keepalives, the steward's timers), in cores.
            "steward_idle_cpu_share": round(idle_share, 3),
            # The same by thread (Python main vs LiveKit's native threads), in cores.
            "steward_idle_cpu_share_by_thread": idle_by_thread,
            # Batching: outbox INSERTs and live packets for those envelopes.
            "outbox_inserts": sum(r.broadcaster.flush_stats.inserts for r in runtimes),
            "live_packets": sum(r.broadcaster.flush_stats.packets for r in runtimes),
            # Every packet the steward published during the run, actions or not, by topic.
            "packets_by_topic": (by_topic := _topic_counts(topics0, topics)),
            "packets_per_action": (round(sum(by_topic.values()) / actions, 2) if actions else None),
            # Acks the steward took, per envelope copy sent live (2 clients: at most 2).
            "ack_packets": sum(r.broadcaster.flush_stats.acks for r in runtimes),
            "run_wall_s": round(wall, 2),
            "join_s": round(join_s, 2),
            "rss_mb": round(rss_peak, 1),
            "rss_mb_idle_rooms": round(rss_idle, 1),
            "rss_mb_base": round(rss_base, 1),
            "rss_mb_per_room": round((rss_peak - rss_base) / rooms, 2),
            "client_process_cpu_s": result.get("cpu_s"),
            # Where the 2 cores went during the run (CPU seconds over run_wall_s).
            "cpu_s_by_process": {"steward": round(cpu, 1), **machine_cpu},
            # The same as shares of one core over the run: the steward beside its clients.
            "cpu_share_by_process": {
                k: round(v / wall, 2) if wall else None
                for k, v in {"steward": cpu, **machine_cpu}.items()
            },
            # Stop-the-world pauses of the steward's process during the run, by generation.
            "gc_pauses": gc_during_run,
            "steward_cpu_s_by_thread": busiest_threads(threads0, threads, top=6, digits=1),
            "canvases_identical": identical,
            "breakdown": marks.breakdown(),
            "overhead_split_ms": marks.overhead_split_ms(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "retransmits": sum(st.retransmits for st in streams),
            "resyncs": sum(st.resyncs for st in streams),
            "previews_coalesced": sum(st.previews_coalesced for st in streams),
            "previews_paced": sum(st.previews_paced for st in streams),
            "degraded_contexts": sum(r.snapshots.degraded_runs for r in runtimes),
            "target_overhead_p95_ms": TARGET_OVERHEAD_P95_MS,
            "errors": sorted({e for rep in reports.values() for e in rep["errors"]})[:5],
            **extra,
        }
        return out
    finally:
        for c in cps:
            await c.kill()
        await stack.close()


def _shares(before: dict[str, float], after: dict[str, float], wall: float) -> dict[str, float]:
    """CPU seconds per thread name between two `thread_cpu_s` readings, as cores."""
    shares = {k: (v - before.get(k, 0.0)) / wall for k, v in after.items()}
    return {k: round(v, 3) for k, v in sorted(shares.items(), key=lambda kv: -kv[1])[:6]}


def _machine_pids(stack: Stack, cps: list[ClientProcess]) -> dict[str, int]:
    pids: dict[str, int] = {f"clients{i}": c.pid for i, c in enumerate(cps) if c.pid}
    if stack.server.proc is not None:
        pids["livekit_server"] = stack.server.proc.pid
    server = getattr(stack.pg, "_server", None)
    with contextlib.suppress(Exception):
        pids["postgres"] = int(server.get_pid())  # type: ignore[union-attr]
    return pids


def _handler(args: argparse.Namespace) -> int:
    configure_logging(os.environ.get("STEWARD_BENCH_LOG_LEVEL", "error"), "json")
    results = []
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    for n in args.rooms:
        try:
            results.append(
                asyncio.run(
                    bounded(run(n, args.tokens_per_s, profile=args.profile), args.limit_s, "scale")
                )
            )
        except Exception as err:  # a step that fails is reported, never hidden
            results.append({"rooms": n, "error": f"{type(err).__name__}: {err}"})
    print_json(results[0] if len(results) == 1 else results)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("scale", help="one steward, N rooms x 2 clients, scripted 50 tokens/s")
    p.add_argument("--json", action="store_true")
    p.add_argument("--rooms", type=int, nargs="+", default=[10])
    p.add_argument("--tokens-per-s", type=float, default=50.0)
    p.add_argument("--limit-s", type=float, default=900.0, help="stop a step after this long")
    p.add_argument(
        "--profile",
        type=Path,
        help="py-spy the steward (flame graph, phases) and pyinstrument the clients, into DIR",
    )
    p.set_defaults(handler=_handler)


def _topic_counts(before: dict[str, float], after: dict[str, float]) -> dict[str, int]:
    counts = {t: int(n - before.get(t, 0.0)) for t, n in after.items()}
    return dict(sorted(((t, n) for t, n in counts.items() if n), key=lambda kv: -kv[1]))
