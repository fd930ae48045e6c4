"""`steward bench scale --rooms N`: one steward process serving N rooms at once.

Each room has 2 headless clients (in a separate process, so the steward's CPU and RSS are
measured alone) and runs one prompt to the scripted model at 50 tokens/s, all rooms at the
same time. Reports the per-action overhead p95 across all rooms, the steward's CPU seconds
during the run, its RSS and the RSS growth per room. Target (issue 7): 200 rooms with
overhead p95 <= 10 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

from steward.bench.clients import canvas_hash
from steward.bench.harness import (
    ClientProcess,
    Marks,
    bounded,
    percentiles,
    self_cpu_s,
    self_rss_mb,
    start_stack,
    wait_until,
)
from steward.commands._common import print_json
from steward.obs.logging import configure_logging

TARGET_OVERHEAD_P95_MS = 10.0


async def run(rooms: int, tokens_per_s: float = 50.0, prompts: int = 1) -> dict[str, Any]:
    marks = Marks()
    stack = await start_stack(tokens_per_s=tokens_per_s, marks=marks)
    cp: ClientProcess | None = None
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
        cp = ClientProcess(stack, names, per_room=2, prompts=prompts, timeout=120)
        await cp.start(timeout=60 + rooms * 2)
        await wait_until(
            lambda: all(len(r.participants.appliers()) == 2 for r in runtimes),
            60 + rooms,
            "every room sees its clients",
        )
        rss_idle = self_rss_mb()
        cpu0 = self_cpu_s()
        t1 = time.monotonic()
        result = await cp.go(timeout=180 + rooms * 3)
        wall = time.monotonic() - t1
        cpu = self_cpu_s() - cpu0
        rss_peak = self_rss_mb()
        await asyncio.sleep(0.3)
        reports = result["rooms"]
        identical = all(
            c["canvas"] == canvas_hash(r.mirror.shapes)
            for r in runtimes
            for c in reports[r.room_id]["clients"].values()
        )
        statuses = [s for rep in reports.values() for s in rep["statuses"]]
        overhead = percentiles(marks.overhead_ms())
        out: dict[str, Any] = {
            "rooms": rooms,
            "clients": rooms * 2,
            "tokens_per_s": tokens_per_s,
            "sessions_done": statuses.count("done"),
            "sessions": len(statuses),
            "overhead_p95_ms": overhead["p95"],
            "overhead_ms": overhead,
            "steward_cpu_s": round(cpu, 2),
            "steward_cpu_share": round(cpu / wall, 2) if wall else None,
            "run_wall_s": round(wall, 2),
            "join_s": round(join_s, 2),
            "rss_mb": round(rss_peak, 1),
            "rss_mb_idle_rooms": round(rss_idle, 1),
            "rss_mb_base": round(rss_base, 1),
            "rss_mb_per_room": round((rss_peak - rss_base) / rooms, 2),
            "client_process_cpu_s": result.get("cpu_s"),
            "canvases_identical": identical,
            "breakdown": marks.breakdown(),
            "target_overhead_p95_ms": TARGET_OVERHEAD_P95_MS,
            "errors": sorted({e for rep in reports.values() for e in rep["errors"]})[:5],
        }
        return out
    finally:
        if cp is not None:
            await cp.kill()
        await stack.close()


def _handler(args: argparse.Namespace) -> int:
    configure_logging("error", "json")
    results = []
    for n in args.rooms:
        try:
            results.append(asyncio.run(bounded(run(n, args.tokens_per_s), args.limit_s, "scale")))
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
    p.set_defaults(handler=_handler)
