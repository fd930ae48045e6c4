"""`steward bench abuse`: a stranger's many-topic stream flood, a hostile host, and the
steward's memory once the attackers are gone.

One room: `ann` (may prompt, her tab offers context), `carl` (a second capable tab) and
`bob` (may prompt, his tab only applies: his runs' context comes from the host, else from
another tab). The host is `hal`, a tab in a process of its own
(`steward_tools.rigs.hostile_host`) that joined first and answers honestly until told
otherwise.

- `spread_flood`: two strangers (a child process, `steward_tools.rigs.flooder`) open
  streams 8 at a time over 200 topics the steward has no handler for: byte and text
  streams written chunk by chunk with no announced size, byte streams announcing 1 byte and
  sending 60 kB, whole announced ones, a packet between each. While they flood, ann calls
  the steward's cheapest RPC every 0.1 s; `rpc_wait_s` is the slowest reply against the
  slowest before the flood.
- `hostile_host`: bob's run while hal answers honestly (the baseline, median of 3), then
  while hal answers every `steward.context` with a gzip bomb as its shapes and 5 MiB of
  noise as its JPEG (median of 3).
- `rss_mb`: this process's resident memory (the steward, ann, bob and carl; every attacker
  runs elsewhere), untrimmed: before the attacks, the peak while they run, and after every
  attacker has left (the highest reading over `AFTER_S` once the steward has forgotten them).
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from typing import Any

from steward.access import mint_token
from steward_tools.bench.harness import Stack
from steward_tools.headless.client import HeadlessClient
from steward_tools.process_usage import self_rss_mb
from steward_tools.rigs.flooder import Flooders, flood
from steward_tools.rigs.hostile_host import HostileHost
from steward_tools.waiting import wait_until

PROMPT = "draw a flow chart of our signup"
SPREAD = (("sal", "app:spread-a"), ("sid", "app:spread-b"))
SPREAD_TOPICS = 200
SPREAD_STREAM_BYTES = 60_000
RPC_EVERY_S = 0.1
FLOOD_WATCH_S = 4.0
AFTER_S = 3.0


async def _rpc_s(client: HeadlessClient) -> float:
    """One round trip of the steward's cheapest RPC (cancelling no run), bounded."""
    started = time.monotonic()
    async with asyncio.timeout(30):
        await client.cancel("no-such-run")
    return time.monotonic() - started


async def honest_run(client: HeadlessClient, timeout: float = 60) -> float | None:
    """Seconds from `client`'s prompt to its run done (None: refused or not done)."""
    started = time.monotonic()
    reply = await client.prompt(PROMPT)
    if reply.session_id is None:
        return None
    status = await client.wait_status(reply.session_id, timeout=timeout)
    return time.monotonic() - started if status == "done" else None


async def _run_s(client: HeadlessClient) -> float | None:
    took = await honest_run(client)
    return None if took is None else round(took, 2)


async def settled_rss_mb() -> float:
    """This process's RSS once the steward has let go of what the attackers left: the highest
    reading over `AFTER_S` (untrimmed: what the steward itself hands back is what counts)."""
    after_at, rss = time.monotonic(), 0.0
    while time.monotonic() - after_at < AFTER_S:
        await asyncio.sleep(0.25)
        rss = max(rss, self_rss_mb())
    return round(rss, 1)


class _Peak:
    """This process's highest RSS while it runs (sampled every 50 ms)."""

    def __init__(self) -> None:
        self.mb = self_rss_mb()
        self._task = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            self.mb = max(self.mb, self_rss_mb())
            await asyncio.sleep(0.05)

    async def stop(self) -> float:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        return round(self.mb, 1)


async def spread_flood(stack: Stack, room: str, ann: HeadlessClient) -> dict[str, Any]:
    s, runtime = stack.server, stack.service.rooms[room]
    specs = [
        flood(
            s.api_key,
            s.api_secret,
            room=room,
            identity=who,
            topic=topic,
            count=100_000,
            size=SPREAD_STREAM_BYTES,
            stream=True,
            spread=SPREAD_TOPICS,
        )
        for who, topic in SPREAD
    ]
    before = [await _rpc_s(ann) for _ in range(5)]
    flooders = await Flooders.start(s.url, stack.settings.steward_identity, specs)
    who = {w for w, _ in SPREAD}
    try:
        await wait_until(lambda: all(runtime.participants.get(w) for w in who), 20, "flooders")
        muted_at: dict[str, float] = {}
        started = time.monotonic()
        await flooders.go()

        async def watch_mutes() -> None:
            while len(muted_at) < len(who) and time.monotonic() - started < 30:
                for w in who - set(muted_at):
                    if w in runtime.abuse.muted:
                        muted_at[w] = round(time.monotonic() - started, 2)
                await asyncio.sleep(0.01)

        mutes = asyncio.create_task(watch_mutes())
        waits: list[float] = []
        while time.monotonic() - started < FLOOD_WATCH_S:
            waits.append(await _rpc_s(ann))
            await asyncio.sleep(RPC_EVERY_S)
        run_s = await _run_s(ann)
        await mutes
        sent = await flooders.result(60)
        counted = {w: runtime.budget.usage(w)[0] for w in who}
    finally:
        await flooders.close()
    return {
        "rpc_wait_s_before": round(max(before), 3),
        "rpc_wait_s": round(max(waits), 3),
        "rpc_calls_during": len(waits),
        "honest_run_s_after_flood": run_s,
        "muted_after_s": {w: muted_at.get(w) for w in sorted(who)},
        "streams_sent_before_mute": sent.get("sent"),
        "bytes_counted_before_mute": counted,
        "targets": {"rpc_wait_s": 2.0, "muted_after_s": 1.0},
    }


async def hostile_host(
    stack: Stack, room: str, host: HostileHost, bob: HeadlessClient
) -> dict[str, Any]:
    runtime = stack.service.rooms[room]
    baseline = [await _run_s(bob) for _ in range(3)]
    await host.answer("bomb_and_fake_jpeg")
    hostile = [await _run_s(bob) for _ in range(3)]
    ok_base = [t for t in baseline if t is not None]
    ok_hostile = [t for t in hostile if t is not None]
    base = statistics.median(ok_base) if ok_base else None
    worst = statistics.median(ok_hostile) if len(ok_hostile) == len(hostile) else None
    return {
        "baseline_runs_s": baseline,
        "hostile_runs_s": hostile,
        "baseline_s": base,
        "hostile_s": worst,
        "over_baseline_s": round(worst - base, 2) if base and worst else None,
        "host_after": runtime.participants.host,
        "degraded_runs": runtime.snapshots.degraded_runs,
        "target_over_baseline_s": 5.0,
    }


async def hostile_cases(stack: Stack) -> dict[str, Any]:
    """The three cases in a room of their own; the steward's RSS around all of them."""
    s = stack.server
    room = f"hostile-{uuid.uuid4().hex[:8]}"
    runtime = await stack.join(room)
    steward = stack.settings.steward_identity
    token = mint_token(s.api_key, s.api_secret, room=room, identity="hal", can_prompt=False)
    host = await HostileHost.start(s.url, token, "hal", steward)
    clients: list[HeadlessClient] = []

    async def client(identity: str, **kw: Any) -> HeadlessClient:
        c = HeadlessClient.create(
            s.url, s.api_key, s.api_secret, room=room, identity=identity, **kw
        )
        await c.connect()
        clients.append(c)
        await wait_until(lambda: runtime.participants.get(identity) is not None, 10, identity)
        return c

    try:
        await wait_until(lambda: runtime.participants.host == "hal", 10, "hal hosting")
        ann = await client("ann")
        await client("carl", can_prompt=False)
        bob = await client("bob", capabilities=("apply",))
        for _ in range(2):  # warm: the first runs of a room allocate what later ones reuse
            await _run_s(ann)
            await _run_s(bob)
        rss_before = self_rss_mb()
        peak = _Peak()
        out: dict[str, Any] = {"spread_flood": await spread_flood(stack, room, ann)}
        out["hostile_host"] = await hostile_host(stack, room, host, bob)
        await host.close()
        gone = {"hal", *(w for w, _ in SPREAD)}
        await wait_until(lambda: not any(runtime.participants.get(w) for w in gone), 20, "gone")
        rss_peak = await peak.stop()
        rss_after = await settled_rss_mb()
        out["rss_mb"] = {
            "before": round(rss_before, 1),
            "peak": rss_peak,
            "after": round(rss_after, 1),
            "after_over_before": round(rss_after - rss_before, 1),
            "target_after_over_before": 16.0,
        }
        return out
    finally:
        await host.close()
        for c in clients:
            await c.disconnect()


def hostile_summary(out: dict[str, Any]) -> dict[str, Any]:
    """The three figures and whether each met its target."""
    flood, host, rss = out["spread_flood"], out["hostile_host"], out["rss_mb"]
    mutes = [t for t in flood["muted_after_s"].values()]
    met = {
        "spread_flood_rpc_wait_s": flood["rpc_wait_s"] <= 2.0,
        "spread_flood_muted_within_1s": None not in mutes and max(mutes) <= 1.0,
        "hostile_host_within_baseline_plus_5s": host["over_baseline_s"] is not None
        and host["over_baseline_s"] <= 5.0,
        "rss_after_within_16mb": rss["after_over_before"] <= 16.0,
    }
    return {
        "spread_flood_rpc_wait_s": flood["rpc_wait_s"],
        "spread_flood_muted_after_s": None if None in mutes else max(mutes),
        "hostile_host_run_s": {"baseline": host["baseline_s"], "hostile": host["hostile_s"]},
        "rss_mb": {k: rss[k] for k in ("before", "peak", "after")},
        "hostile_targets_met": met,
        "misses": [name for name, ok in met.items() if not ok],
    }
