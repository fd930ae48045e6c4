"""`steward bench latency`: per-action overhead and end-to-end latency over a real LiveKit.

One steward (this process) serves one room with `--clients` headless clients (another
process); the first client sends `--prompts` prompts one after another to the scripted model.
`--browsers` runs the same with Chromium tabs on the client-bridge demo page instead (see
`steward_tools.rigs.browsers`), then times the host screenshot (`steward_tools.bench.screenshot`).
The prompter "types" each prompt for `--typing-ms` after a composing hint (the steward
prefetches the prompter's context meanwhile); `--cold-prompts` more are sent without one
(`prompt_to_model_cold_ms`), and each prompt's context source is reported.
See `steward_tools.bench.harness` for where each instant is taken. Targets: overhead p95
<= 2 ms, e2e p95 <= 30 ms, prompt_to_model p95 <= 120 ms, screenshot p95 <= 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from collections import Counter
from collections.abc import Awaitable
from typing import Any, TypeVar

from steward.commands.setup import print_json
from steward.obs.logging import configure_logging
from steward.room.runtime import RoomRuntime
from steward_tools.bench import screenshot
from steward_tools.bench.harness import (
    ClientProcess,
    Marks,
    Stack,
    percentiles,
    sampling,
    start_stack,
)
from steward_tools.bench.raw import RATIO_TARGETS, RawProbes, against_raw, slowest_delivery_ms
from steward_tools.rigs.browsers import PAGE_SETTINGS, Browsers, PageServer
from steward_tools.rigs.clients import canvas_hash
from steward_tools.waiting import bounded, wait_until

MESSAGES = [
    "draw a flow chart of our signup",
    "add three sticky notes about goals plans risks",
    "draw a red circle",
    "draw a flow chart of the checkout",
    "draw a blue star",
    "draw a flow chart of login",
]
TARGETS = {"overhead_ms": 2.0, "e2e_ms": 30.0, "prompt_to_model_ms": 120.0, "screenshot_ms": 100.0}
T = TypeVar("T")
# A user types for this long after focusing the prompt box (the composing hint) by default.
TYPING_MS = 1500.0
# Prompts sent cold (no hint) besides the typed ones, interleaved with them.
COLD_PROMPTS = 2


def prompt_plan(prompts: int, cold: int, typing_ms: float) -> list[bool]:
    """Per prompt: typed after a composing hint (True) or sent cold. The cold ones alternate
    with the typed ones (T C T C T T ...), so both paths run under the same conditions."""
    if typing_ms <= 0:
        return [False] * prompts
    plan: list[bool] = []
    for n in range(max(prompts, cold)):
        if n < prompts:
            plan.append(True)
        if n < cold:
            plan.append(False)
    return plan


def prompt_paths(
    marks: Marks, runtime: RoomRuntime, sessions: list[str], hinted: list[bool], typing_ms: float
) -> dict[str, Any]:
    """`prompt_to_model_ms` over the typed prompts (all prompts when nothing is typed),
    `prompt_to_model_cold_ms` over the cold ones, and where each prompt's context came from
    (prefetched, cached, fetched, degraded: the session's first context request)."""
    took = {
        sid: (marks.model_request[sid] - t0) * 1000
        for sid, t0 in marks.prompt_received.items()
        if sid in marks.model_request
    }
    rows: list[dict[str, Any]] = []
    for sid, hint in zip(sessions, hinted, strict=False):
        session = runtime.sessions.sessions.get(sid)
        sources = session.figures.context_sources if session is not None else []
        ms = took.get(sid)
        rows.append(
            {
                "session": sid,
                "hinted": hint,
                "context_source": sources[0] if sources else None,
                "prompt_to_model_ms": None if ms is None else round(ms, 2),
            }
        )
    typed = [r for r in rows if r["hinted"]]
    cold = [r for r in rows if not r["hinted"]]

    def times(rs: list[dict[str, Any]]) -> list[float]:
        return [r["prompt_to_model_ms"] for r in rs if r["prompt_to_model_ms"] is not None]

    return {
        "prompt_to_model_ms": percentiles(times(typed) if typed else times(cold)),
        "prompt_to_model_cold_ms": percentiles(times(cold)),
        "typing_ms": typing_ms,
        "context_sources": {
            "typed": dict(Counter(str(r["context_source"]) for r in typed)),
            "cold": dict(Counter(str(r["context_source"]) for r in cold)),
        },
        "prompts_detail": rows,
    }


async def run(
    clients: int = 5,
    prompts: int = 12,
    tokens_per_s: float | None = None,
    browsers: bool = False,
    screenshot_text: bool = True,
    typing_ms: float = TYPING_MS,
    cold_prompts: int = COLD_PROMPTS,
) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    plan = prompt_plan(prompts, cold_prompts, typing_ms)
    if browsers:
        out, shot = await run_browsers(
            clients, prompts, tokens_per_s, screenshot_text, plan=plan, typing_ms=typing_ms
        )
        out.update(shot)
    else:
        out = await run_headless(clients, prompts, tokens_per_s, plan=plan, typing_ms=typing_ms)
        out.update(screenshot.unmeasured("needs Chromium: run with --browsers"))
    # Other work on the machine skews every figure here: say how busy it was.
    out["load_average_1m"] = {"before": load_before, "after": os.getloadavg()[0]}
    out["targets"] = {**TARGETS, **RATIO_TARGETS}
    out["misses"] = [
        k
        for k, limit in TARGETS.items()
        if isinstance(out.get(k), dict) and (out[k].get("p95") or 0) > limit
    ] + [k for k, limit in RATIO_TARGETS.items() if (out.get(k) or 0) > limit]
    return out


async def run_headless(
    clients: int,
    prompts: int,
    tokens_per_s: float | None,
    *,
    plan: list[bool] | None = None,
    typing_ms: float = 0.0,
) -> dict[str, Any]:
    marks = Marks()
    stack = await start_stack(tokens_per_s=tokens_per_s, marks=marks)
    cp: ClientProcess | None = None
    plan = plan if plan is not None else [False] * prompts
    try:
        room = f"bench-latency-{uuid.uuid4().hex[:6]}"
        runtime = await stack.join(room)
        cp = ClientProcess(
            stack,
            [room],
            per_room=clients,
            prompts=len(plan),
            messages=MESSAGES,
            hinted=plan,
            typing_ms=typing_ms,
        )
        await cp.start(timeout=60)
        await wait_until(
            lambda: len(runtime.participants.appliers()) == clients, 30, "clients seen"
        )
        probes = RawProbes(runtime.room.local_participant, marks, runtime.participants.appliers)
        result = await _beside(
            cp.go(timeout=60 + len(plan) * (30 + typing_ms / 1000)), probes, stack
        )
        report = result["rooms"][room]
        applied = {cid: c["applied"] for cid, c in report["clients"].items()}
        e2e, missing = marks.e2e_ms(applied)
        raw = slowest_delivery_ms(probes.sent, {c: r["raw"] for c, r in report["clients"].items()})
        await asyncio.sleep(0.2)
        mirror = canvas_hash(runtime.mirror.shapes)
        stats = [c["stats"] for c in report["clients"].values()]
        out: dict[str, Any] = {
            "clients": clients,
            "prompts": prompts,
            "sessions": len(report["sessions"]),
            "statuses": sorted(set(report["statuses"])),
            **_timing(marks, e2e, missing, raw, probes),
            **prompt_paths(marks, runtime, report["sessions"], report["hinted"], typing_ms),
            "duplicates_applied": sum(s["duplicates_applied"] for s in stats),
            "out_of_order_applied": sum(s["out_of_order_applied"] for s in stats),
            "canvases_identical": all(c["canvas"] == mirror for c in report["clients"].values()),
            "tokens_per_s": tokens_per_s or stack.settings.steward_scripted_tokens_per_s,
            "transport": "headless python clients (livekit rtc 1.1.21), separate process",
            "errors": report["errors"],
        }
    finally:
        if cp is not None:
            await cp.kill()
        await stack.close()
    return out


async def _beside(run: Awaitable[T], probes: RawProbes, stack: Stack) -> T:
    """The clients' run with raw probes, loop-lag samples (`loop_lag_ms` in `breakdown`:
    how late the steward's own loop wakes, a part of every stage) and Postgres round trips
    on the outbox's pool (`pg_acquire_ms`, `pg_select1_ms`) taken meanwhile."""
    stop_sampling = await sampling(probes.marks, stack.service.outbox.pool)
    probes.start()
    try:
        return await run
    finally:
        await probes.stop()
        await stop_sampling()


def _timing(
    marks: Marks,
    e2e: list[float],
    missing: int,
    raw: tuple[list[float], int],
    probes: RawProbes,
) -> dict[str, Any]:
    """The figures both transports report, from the run's marks and raw probes."""
    out: dict[str, Any] = {
        "actions": len(e2e),
        "actions_not_applied_everywhere": missing,
        "overhead_ms": percentiles(marks.overhead_ms()),
        "e2e_ms": percentiles(e2e),
        "prompt_to_model_ms": percentiles(marks.prompt_to_model_ms()),
        "breakdown": marks.breakdown(),
        "overhead_split_ms": marks.overhead_split_ms(),
    }
    return {**out, **against_raw(out, *raw), **probes.figures()}


async def run_browsers(
    clients: int,
    prompts: int,
    tokens_per_s: float | None,
    screenshot_text: bool = True,
    *,
    plan: list[bool] | None = None,
    typing_ms: float = 0.0,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same run with `clients` Chromium tabs on the demo page (a fresh stack), then the
    screenshot round trip in a room of its own (see `steward_tools.bench.screenshot`)."""
    marks = Marks()
    stack = await start_stack(tokens_per_s=tokens_per_s, marks=marks, **PAGE_SETTINGS)
    pages = PageServer(stack.service)
    tabs = Browsers()
    plan = plan if plan is not None else [False] * prompts
    try:
        page_url = await pages.start()
        await tabs.start()
        room = f"bench-browsers-{uuid.uuid4().hex[:6]}"
        runtime = await stack.join(room)
        started = time.monotonic()
        opened = await tabs.open(page_url, room, clients)
        open_s = time.monotonic() - started
        await wait_until(lambda: len(runtime.participants.appliers()) == clients, 30, "tabs seen")
        probes = RawProbes(runtime.room.local_participant, marks, runtime.participants.appliers)
        result = await _beside(
            tabs.call(
                "run",
                60 + len(plan) * (30 + typing_ms / 1000),
                room=room,
                messages=MESSAGES,
                prompts=len(plan),
                hinted=plan,
                typingMs=typing_ms,
            ),
            probes,
            stack,
        )
        report = (await tabs.call("report", 60, room=room))["clients"]
        clock = await tabs.clock_check(opened["tabs"][0]["index"])
        offset = clock.pop("offset_s")

        def monotonic(key: str) -> dict[str, dict[str, float]]:  # page wall ms → our clock
            return {
                cid: {k: wall_ms / 1000 - offset for k, wall_ms in c[key].items()}
                for cid, c in report.items()
            }

        e2e, missing = marks.e2e_ms(monotonic("applied"))
        raw = slowest_delivery_ms(probes.sent, monotonic("raw"))
        await asyncio.sleep(0.2)
        hashes = {c["canvas"] for c in report.values()}
        out: dict[str, Any] = {
            "clients": clients,
            "prompts": prompts,
            "sessions": len(result["sessions"]),
            "statuses": sorted(set(result["statuses"])),
            **_timing(marks, e2e, missing, raw, probes),
            **prompt_paths(marks, runtime, result["sessions"], result["hinted"], typing_ms),
            "duplicates_applied": sum(c["duplicates"] for c in report.values()),
            "out_of_order_applied": sum(c["outOfOrder"] for c in report.values()),
            "canvases_identical": len(hashes) == 1,
            "shapes_per_tab": sorted({c["shapes"] for c in report.values()}),
            "mirror_shapes": len(runtime.mirror.shapes),
            "settled": result["settled"],
            "tabs_open_s": round(open_s, 1),
            "run_s": round(result["elapsedMs"] / 1000, 1),
            "tokens_per_s": tokens_per_s or stack.settings.steward_scripted_tokens_per_s,
            "clock": clock,
            "transport": "Chromium tabs on the client-bridge demo page, one browser per tab, "
            "driven by client-bridge/bench/browsers.mjs",
            "user_agent": opened.get("userAgent"),
            "errors": result["errors"],
        }
        await tabs.call("leave", 60, room=room)  # the screenshot is timed on a quiet machine
        shot = await screenshot.measure(stack, tabs, page_url, text=screenshot_text)
    finally:
        await tabs.close()
        await pages.close()
        await stack.close()
    return out, shot


def _handler(args: argparse.Namespace) -> int:
    configure_logging("error", "json")
    result = asyncio.run(
        bounded(
            run(
                args.clients,
                args.prompts,
                args.tokens_per_s,
                args.browsers,
                screenshot_text=not args.screenshot_plain,
                typing_ms=args.typing_ms,
                cold_prompts=args.cold_prompts,
            ),
            900,
            "latency",
        )
    )
    print_json(result)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("latency", help="overhead, e2e, prompt-to-model and screenshot latency")
    p.add_argument("--json", action="store_true")
    p.add_argument("--clients", type=int, default=5)
    p.add_argument("--prompts", type=int, default=12)
    p.add_argument("--tokens-per-s", type=float, default=None)
    p.add_argument(
        "--typing-ms",
        type=float,
        default=TYPING_MS,
        help="the prompter sends a composing hint this long before each typed prompt "
        "(0: no hints, every prompt cold)",
    )
    p.add_argument(
        "--cold-prompts",
        type=int,
        default=COLD_PROMPTS,
        help="prompts sent without a hint besides --prompts typed ones (prompt_to_model_cold_ms)",
    )
    p.add_argument(
        "--browsers",
        action="store_true",
        help="Chromium tabs on the client-bridge demo page instead of headless clients, "
        "plus the screenshot round trip (needs node, /usr/bin/chromium, the built demo)",
    )
    p.add_argument(
        "--screenshot-plain",
        action="store_true",
        help="seed the screenshot canvas without labels or text shapes (shows what text costs)",
    )
    p.set_defaults(handler=_handler)
