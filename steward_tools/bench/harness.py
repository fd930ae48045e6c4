"""The measurement harness shared by `bench latency`, `bench scale` and `bench faults`.

Three instants per action, all on CLOCK_MONOTONIC (`time.monotonic`, which is system-wide on
Linux, so the steward process and the client process can be compared):
- *complete in the model stream*: the agent's `mark("action_complete", wire_id)` hook, taken
  when the parser reports the action complete, before it is sanitized or resolved;
- *handed to LiveKit*: a wrapper around the room's publisher, taken right before
  `publish_data` is called for the first live, non-partial envelope carrying the action;
- *applied in a client*: the headless client's `_apply` of the final version (clients.py).
`prompt received` is taken when the `steward.prompt` RPC handler is entered, `model request`
by the agent's `mark("model_request", session_id)` right before the model is asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from livekit import rtc
from pydantic import SecretStr

from steward.config import Settings, get_settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.obs.stage_hooks import Stage, StageEvent
from steward.protocol.names import RPC_PROMPT
from steward.room.outbound.envelopes import envelopes_in
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.store.embedded import EmbeddedPostgres
from steward.store.outbox import OutboxRow
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.participant import ParticipantProcess
from steward_tools.waiting import bounded


async def loop_lag(marks: Marks, period: float = 0.05) -> None:
    """Samples how late this process's event loop wakes up (`loop_lag_ms` stage)."""
    while True:
        t0 = time.monotonic()
        await asyncio.sleep(period)
        marks.stages.setdefault("loop_lag_ms", []).append(
            max(0.0, (time.monotonic() - t0 - period) * 1000)
        )


async def pg_round_trips(marks: Marks, pool: Any, period: float = 0.05) -> None:
    """Samples the outbox pool beside the run's INSERTs: how long a connection takes to
    acquire (`pg_acquire_ms`) and a `SELECT 1` on it (`pg_select1_ms`: a round trip with no
    row, no commit). An INSERT no slower than these waits for the round trip (the loop and
    Postgres getting a core), not for its own work or its commit."""
    while True:
        await asyncio.sleep(period)
        t0 = time.monotonic()
        async with pool.acquire() as conn:
            t1 = time.monotonic()
            await conn.fetchval("SELECT 1")
            marks.stage("pg_select1_ms", t1)
        marks.stage("pg_acquire_ms", t0, t1)


async def sampling(marks: Marks, pool: Any) -> Callable[[], Awaitable[None]]:
    """Starts the loop-lag and Postgres round-trip samplers; returns the call that stops them."""
    tasks = [asyncio.ensure_future(c) for c in (loop_lag(marks), pg_round_trips(marks, pool))]

    async def stop() -> None:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return stop


def percentiles(values: list[float]) -> dict[str, float | int | None]:
    """{p50, p95, p99, n} by the nearest-rank method, in the values' unit, rounded to 0.01."""
    if not values:
        return {"p50": None, "p95": None, "p99": None, "n": 0}
    ordered = sorted(values)

    def rank(p: float) -> float:
        k = max(0, min(len(ordered) - 1, int(-(-p * len(ordered) // 100)) - 1))
        return round(ordered[k], 2)

    return {"p50": rank(50), "p95": rank(95), "p99": rank(99), "n": len(ordered)}


@dataclass
class Marks:
    """Timestamps recorded in the steward process (seconds, CLOCK_MONOTONIC)."""

    model_request: dict[str, float] = field(default_factory=dict)  # session → first request
    action_complete: dict[str, float] = field(default_factory=dict)  # wire id base → t
    prompt_received: dict[str, float] = field(default_factory=dict)  # session → t
    publishes: list[tuple[float, str, bytes]] = field(default_factory=list)  # t, topic, packet
    appends: list[tuple[float, float, str]] = field(default_factory=list)  # start, end, payload
    # Where the time goes (ms): the outbox INSERT before each publish, the context round trip.
    stages: dict[str, list[float]] = field(default_factory=dict)

    def stage(self, name: str, started: float, ended: float | None = None) -> None:
        ended = time.monotonic() if ended is None else ended
        self.stages.setdefault(name, []).append((ended - started) * 1000)

    def on_publish_issued(self, event: StageEvent) -> None:
        payload = cast(bytes, event.detail["payload"])
        self.publishes.append((event.at, str(event.detail["topic"]), payload))

    def on_publish_completed(self, event: StageEvent) -> None:  # issue → the SDK's callback
        self.stage("publish_data_ms", event.started or event.at, event.at)

    def on_outbox_append(self, event: StageEvent) -> None:
        started = event.started or event.at
        self.stage("outbox_append_ms", started, event.at)
        rows = cast(Sequence[OutboxRow], event.detail["rows"])
        self.appends.extend((started, event.at, row.payload) for row in rows)

    def breakdown(self) -> dict[str, Any]:
        return {name: percentiles(v) for name, v in sorted(self.stages.items())}

    def mark(self, kind: str, key: str) -> None:
        now = time.monotonic()
        if kind == "model_request":
            self.model_request.setdefault(key, now)
        elif kind == "action_complete":
            self.action_complete.setdefault(key, now)

    def handed_to_livekit(self) -> dict[str, float]:
        """Wire action id → first time a final (non-partial) envelope with it was published."""
        out: dict[str, float] = {}
        for t, topic, packet in self.publishes:
            for env in envelopes_in(topic, packet):
                if env.get("partial"):
                    continue
                for action in env.get("actions", []):
                    out.setdefault(action["id"], t)
        return out

    def overhead_ms(self) -> list[float]:
        """Per action with ops: complete in the stream → its first op handed to LiveKit."""
        published = self.handed_to_livekit()
        out = []
        for base, t0 in self.action_complete.items():
            t1 = published.get(base, published.get(f"{base}.0"))
            if t1 is not None:
                out.append((t1 - t0) * 1000)
        return out

    def overhead_split_ms(self) -> dict[str, Any]:
        """The overhead in parts: complete → the final envelope's outbox INSERT
        starts (sanitize, resolve, earlier sends), the INSERT, INSERT done → handed over;
        and `without_insert`, per action the first and last together (the steward's own
        part, beside the Postgres round trip that persist-before-publish puts in the path)."""
        inserted: dict[str, tuple[float, float]] = {}
        for start, end, payload in self.appends:
            env = json.loads(payload)
            if not env.get("partial"):
                for action in env.get("actions", []):
                    inserted.setdefault(action["id"], (start, end))
        published = self.handed_to_livekit()
        parts: dict[str, list[float]] = {
            "before_insert": [],
            "insert": [],
            "after_insert": [],
            "without_insert": [],
        }
        for base, t0 in self.action_complete.items():
            key = base if base in published else f"{base}.0"
            if key in published and key in inserted:
                start, end = inserted[key]
                parts["before_insert"].append((start - t0) * 1000)
                parts["insert"].append((end - start) * 1000)
                parts["after_insert"].append((published[key] - end) * 1000)
                parts["without_insert"].append((start - t0 + published[key] - end) * 1000)
        return {name: percentiles(v) for name, v in parts.items()}

    def e2e_ms(self, applied: dict[str, dict[str, float]]) -> tuple[list[float], int]:
        """Per action: complete → applied in every client (the slowest); and the count of
        actions some client never applied."""
        out, missing = [], 0
        published = self.handed_to_livekit()
        for base, t0 in self.action_complete.items():
            wire_id = base if base in published else f"{base}.0"
            if wire_id not in published:
                continue  # no canvas op (a message, a thought, a refused action)
            times = [a.get(wire_id) for a in applied.values()]
            if any(t is None for t in times):
                missing += 1
                continue
            out.append((max(t for t in times if t is not None) - t0) * 1000)
        return out, missing

    def prompt_to_model_ms(self) -> list[float]:
        return [
            (self.model_request[sid] - t0) * 1000
            for sid, t0 in self.prompt_received.items()
            if sid in self.model_request
        ]


def instrument(runtime: RoomRuntime, marks: Marks) -> None:
    """Timestamp envelopes handed to LiveKit and prompts received, in this room."""
    broadcaster = runtime.broadcaster
    broadcaster.hooks.listen(Stage.PUBLISH_ISSUED, marks.on_publish_issued)
    broadcaster.hooks.listen(Stage.PUBLISH_COMPLETED, marks.on_publish_completed)
    # One Outbox serves every room; listening with the same bound method adds it once.
    broadcaster.outbox.hooks.listen(Stage.OUTBOX_APPEND, marks.on_outbox_append)
    on_prompt = runtime.intake.on_prompt_rpc

    async def timed_prompt(inv: rtc.RpcInvocationData) -> str:
        t0 = time.monotonic()
        reply = await on_prompt(inv)
        session_id = json.loads(reply).get("sessionId")
        if session_id:
            marks.prompt_received[session_id] = t0
        return reply

    runtime.room.local_participant.register_rpc_method(RPC_PROMPT, timed_prompt)
    _instrument_context(runtime, marks)


def _instrument_context(runtime: RoomRuntime, marks: Marks) -> None:
    fetch = runtime.snapshots.fetch

    async def timed_fetch(**kw: Any) -> Any:
        t0 = time.monotonic()
        try:
            return await fetch(**kw)
        finally:
            marks.stage("context_fetch_ms", t0)

    runtime.snapshots.fetch = timed_fetch  # type: ignore[method-assign]


@dataclass
class Stack:
    """A loopback livekit-server, an embedded Postgres and one steward service."""

    server: LiveKitServer
    settings: Settings
    service: StewardService
    marks: Marks
    pg: EmbeddedPostgres | None = None
    tmp: tempfile.TemporaryDirectory[str] | None = None

    async def join(self, room: str) -> RoomRuntime:
        runtime = await self.service.join(room)
        instrument(runtime, self.marks)
        return runtime

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.service.close()
        if self.pg is not None:
            self.pg.stop()
        if self.tmp is not None:
            self.tmp.cleanup()
        self.server.stop()


async def start_stack(
    *, tokens_per_s: float | None = None, marks: Marks | None = None, **overrides: Any
) -> Stack:
    """Everything a benchmark needs, on loopback; `tokens_per_s` sets the scripted model."""
    server = await LiveKitServer().astart()
    tmp = tempfile.TemporaryDirectory(prefix="steward-bench-pg-")
    pg = EmbeddedPostgres(Path(tmp.name))
    try:
        db_url = await pg.astart()
        base = get_settings()
        values: dict[str, Any] = {
            "livekit_url": server.url,
            "livekit_api_key": server.api_key,
            "livekit_api_secret": type(base.livekit_api_secret)(server.api_secret),
            "database_url": db_url,
            "steward_http_port": 0,
            "steward_model": "scripted",
        }
        values.update(overrides)
        settings = base.model_copy(update=values)
        marks = marks or Marks()
        agent = OneShotRunner(
            OneShotConfig(settings=settings, tokens_per_s=tokens_per_s, mark=marks.mark)
        )
        service = StewardService(settings, runner=lambda: agent)
        await service.start(http=False)
    except BaseException:
        pg.stop()
        tmp.cleanup()
        server.stop()
        raise
    return Stack(server, settings, service, marks, pg, tmp)


async def start_api_stack(label: str, **overrides: Any) -> Stack:
    """A stack whose HTTP API is up on loopback behind a fresh key (benches that probe it)."""
    stack = await start_stack(
        steward_api_key=SecretStr(f"{label}-{uuid.uuid4().hex}"),
        steward_http_host="127.0.0.1",
        **overrides,
    )
    try:
        await stack.service.start_http()
    except BaseException:
        await stack.close()
        raise
    return stack


def rooms_spec(server: LiveKitServer, steward: str, rooms: list[str]) -> dict[str, Any]:
    """What a participant process of a bench needs to join `rooms` (clients, observer)."""
    return {
        "url": server.url,
        "key": server.api_key,
        "secret": server.api_secret,
        "steward": steward,
        "rooms": rooms,
    }


class ClientProcess:
    """The headless clients of a run, in their own process (`steward_tools.rigs.clients`), so
    the steward's CPU and memory are measured alone."""

    def __init__(self, stack: Stack, rooms: list[str], **spec: Any) -> None:
        self.spec = {**rooms_spec(stack.server, stack.settings.steward_identity, rooms), **spec}
        self.child: ParticipantProcess | None = None
        self.pid: int | None = None

    async def start(self, timeout: float) -> None:
        self.child = await ParticipantProcess.start(
            "steward_tools.rigs.clients", self.spec, timeout=timeout, what="connecting the clients"
        )
        self.pid = self.child.pid

    async def go(self, timeout: float) -> dict[str, Any]:
        assert self.child is not None
        await self.child.send("go")
        result = await self.child.read(timeout, "the client run")
        await bounded(self.child.proc.wait(), 30, "the client process exit")
        return result

    def cpu_s(self) -> float | None:
        """User + system CPU of the client process so far (from /proc)."""
        return self.child.cpu_s() if self.child else None

    async def kill(self) -> None:
        if self.child is not None:
            await self.child.kill()
