"""The client side of a benchmark, in a process of its own (`steward_tools.rigs.participant`):
`python -m steward_tools.rigs.clients`.

Reads one JSON spec on stdin, connects `per_room` headless clients to every room, prints
`{"event": "ready"}`, waits for a `go` line, then in every room the first client sends the
prompts one after another (each waits for its session's terminal status and for every client
of the room to settle; prompts marked in `hinted` follow a composing hint and `typing_ms` of
typing). Prints one JSON result line: per client, when each final action was applied and
each raw probe arrived (CLOCK_MONOTONIC), its delivery counters and a hash of its canvas.

Fault knobs (all optional): `faults` (headless `Faults` fields, applied to every client but
the prompter), `reconnect` (force a full reconnect of one client during every prompt),
`host_leaves` (the room's first client leaves during the first prompt and a new one joins).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import resource
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from livekit import rtc

from steward.protocol.messages import ActionEnvelope
from steward_tools.headless.client import Faults, HeadlessClient
from steward_tools.rigs.participant import READY, next_line, run_child, say
from steward_tools.rigs.raw_probe import RAW_TOPIC, echo_payload, echo_wanted, probe_id


def canvas_hash(shapes: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(shapes, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class TimedClient(HeadlessClient):
    """A headless client that notes when it applied the final version of each action, and
    when each raw probe (`steward_tools.rigs.raw_probe`) reached its data callback."""

    applied_at: dict[str, float] = field(default_factory=dict)
    raw_at: dict[str, float] = field(default_factory=dict)

    def _on_data(self, packet: rtc.DataPacket) -> None:
        if packet.topic == RAW_TOPIC:
            now = time.monotonic()
            pid = probe_id(packet.data)
            if pid is not None:
                self.raw_at.setdefault(pid, now)
            if (echo := echo_wanted(packet.data)) is not None:
                self._spawn(self._send(echo_payload(echo), RAW_TOPIC))
            return
        super()._on_data(packet)

    def _apply(self, env: ActionEnvelope) -> None:
        super()._apply(env)
        if not env.partial:
            now = time.monotonic()
            for action in env.actions:
                self.applied_at[action.id] = now


async def _settle(clients: list[TimedClient], session_id: str, quiet_s: float = 0.3) -> bool:
    """Every client at the same seq of the session, unchanged for `quiet_s`, no held gap."""
    last: tuple[int, ...] | None = None
    since = time.monotonic()
    deadline = since + 30
    while time.monotonic() < deadline:
        seqs = tuple(c.applied_seq(session_id) for c in clients)
        held = sum(c.order.held_count() for c in clients)
        if seqs != last:
            last, since = seqs, time.monotonic()
        elif len(set(seqs)) == 1 and held == 0 and time.monotonic() - since >= quiet_s:
            return True
        await asyncio.sleep(0.02)
    return False


@dataclass
class RoomRun:
    """One room of a client process: its clients, the runs started there and how each went."""

    room: str
    clients: list[TimedClient]
    sessions: list[str] = field(default_factory=list)
    hinted: list[bool] = field(default_factory=list)  # per session: typed after a hint
    statuses: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    settled: bool = True
    left: list[TimedClient] = field(default_factory=list)


def _client(spec: dict[str, Any], room: str, identity: str, faults: Faults | None) -> TimedClient:
    client = TimedClient.create(
        spec["url"],
        spec["key"],
        spec["secret"],
        room=room,
        identity=identity,
        steward_identity=spec.get("steward", "canvas-steward"),
        faults=faults,
    )
    assert isinstance(client, TimedClient)
    return client


async def _connect_room(spec: dict[str, Any], room: str) -> RoomRun:
    clients = []
    for i in range(spec["per_room"]):
        faults = Faults(**spec["faults"]) if spec.get("faults") and i > 0 else None
        client = _client(spec, room, f"{room}-c{i}", faults)
        await client.connect()
        clients.append(client)
    return RoomRun(room, clients)


async def _disrupt(spec: dict[str, Any], run: RoomRun, n: int) -> None:
    """Faults that happen while a session streams."""
    await asyncio.sleep(spec.get("disrupt_after_s", 0.5))
    if spec.get("reconnect") and len(run.clients) > 1:
        victim = run.clients[1 + n % (len(run.clients) - 1)]
        with contextlib.suppress(Exception):
            await victim.simulate_full_reconnect()
    if spec.get("host_leaves") and n == 0 and len(run.clients) > 2:
        # The first joiner is the host; it leaves, a fresh browser joins in its place.
        host = run.clients.pop(1)
        await host.disconnect()
        run.left.append(host)
        fresh = _client(spec, run.room, f"{run.room}-late", None)
        await fresh.connect()
        run.clients.append(fresh)


async def _drive(spec: dict[str, Any], run: RoomRun) -> None:
    prompter = run.clients[0]
    messages = spec.get("messages") or ["draw a flow chart of our signup"]
    # `hinted[n]`: the user types prompt n for `typing_ms` after a composing hint.
    hinted, typing_s = spec.get("hinted") or [], spec.get("typing_ms", 0) / 1000
    for n in range(spec["prompts"]):
        hint = n < len(hinted) and bool(hinted[n]) and typing_s > 0
        try:
            if hint:
                await prompter.composing()
                await asyncio.sleep(typing_s)
            reply = await prompter.prompt(messages[n % len(messages)])
        except Exception as err:
            run.errors.append(f"prompt: {type(err).__name__}: {err}")
            continue
        if reply.session_id is None:
            run.errors.append(f"refused: {reply.error}")
            await asyncio.sleep(1.0)
            continue
        sid = reply.session_id
        run.sessions.append(sid)
        run.hinted.append(hint)
        disrupt = asyncio.ensure_future(_disrupt(spec, run, n))
        try:
            run.statuses.append(await prompter.wait_status(sid, timeout=spec.get("timeout", 60)))
        except TimeoutError:
            run.statuses.append("timeout")
        await disrupt
        run.settled = await _settle(run.clients, sid) and run.settled


def _report(run: RoomRun) -> dict[str, Any]:
    return {
        "sessions": run.sessions,
        "hinted": run.hinted,
        "statuses": run.statuses,
        "errors": run.errors,
        "settled": run.settled,
        "clients": {
            c.identity: {
                "applied": c.applied_at,
                "raw": c.raw_at,
                "stats": asdict(c.stats),
                "reconnects": c.reconnects,
                "canvas": canvas_hash(c.shapes),
                "shapes": len(c.shapes),
                "seqs": c.order.sessions(),
            }
            for c in run.clients
        },
    }


async def clients(spec: dict[str, Any]) -> dict[str, Any]:
    sem = asyncio.Semaphore(spec.get("connect_concurrency", 8))

    async def connect(room: str) -> RoomRun:
        async with sem:
            return await _connect_room(spec, room)

    runs = await asyncio.gather(*(connect(r) for r in spec["rooms"]))
    say(READY)
    await next_line()  # go
    started, cpu0 = time.monotonic(), _cpu_s()
    await asyncio.gather(*(_drive(spec, run) for run in runs))
    result = {
        "event": "result",
        "elapsed_s": round(time.monotonic() - started, 3),
        "cpu_s": round(_cpu_s() - cpu0, 2),
        "rooms": {run.room: _report(run) for run in runs},
    }
    for run in runs:
        for c in run.clients:
            with contextlib.suppress(Exception):
                await c.disconnect()
    return result


async def main(spec: dict[str, Any]) -> None:
    if not spec.get("profile"):
        say(await clients(spec))
        return
    # `bench scale --profile DIR`: where this process spends its time, as text.
    from pyinstrument import Profiler

    with Profiler(interval=0.005, async_mode="disabled") as profiler:
        result = await clients(spec)
    text = profiler.output_text(unicode=False, show_all=False)
    await asyncio.to_thread(Path(spec["profile"]).write_text, text)
    say(result)


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    run_child(main)
