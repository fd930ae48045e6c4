"""A participant whose envelopes the browser's own executor applies: an independent client.

The headless client applies envelopes with the steward's own `CanvasMirror`, so a client
equal to the mirror cannot reveal an apply bug. `ExecutorClient` keeps the LiveKit
transport and the injected faults of `TimedClient`, and hands every envelope that gets
through to `client-bridge/bench/executor-client.mjs`: the TypeScript `Executor` (seq order,
gap buffer, exactly-once memory, fragments, partial reverts, acks, resyncs, the gap retry
timer) over a real tldraw Editor and store, in Node with jsdom. Its acks and resyncs go back
to the steward from here; its canvas is read from tldraw (`readPage`).

`page_disagreements` compares such a page with a mirror under the rules the parity fixtures
hold the two appliers to (client-bridge/test/parity.test.ts): same shapes, the same order
among siblings, geometry within 1e-6, every prop the mirror holds equal (tldraw measures
auto-sized text's `w` itself and stores draw pressure `z` as Float16).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from livekit import rtc

from steward.obs.logging import get_logger
from steward.protocol.messages import ActionEnvelope, StatusMessage
from steward.protocol.names import TOPIC_ACK, TOPIC_RESYNC, TOPIC_STATUS
from steward_tools.rigs.browsers import BRIDGE, spawn_node_driver, stop_node_driver
from steward_tools.rigs.clients import TimedClient

log = get_logger(__name__)

DRIVER = BRIDGE / "bench" / "executor-client.mjs"
TOLERANCE = 1e-6


class NodeExecutor:
    """The Node process running the bridge's executor; replies by id, events to `on_event`."""

    def __init__(self, on_event: Any) -> None:
        self.on_event = on_event
        self.proc: asyncio.subprocess.Process | None = None
        self._next = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._drain: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self.stderr = bytearray()

    async def start(self, timeout: float = 60) -> None:
        self.proc = await spawn_node_driver(DRIVER)
        self._ready = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read())
        self._drain = asyncio.ensure_future(self._drain_stderr())
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except TimeoutError:
            raise RuntimeError(f"executor driver not ready in {timeout} s: {self.tail()}") from None

    def tail(self) -> str:
        return self.stderr.decode(errors="replace")[-2000:]

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self.stderr += chunk
            del self.stderr[:-16384]

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while raw := await self.proc.stdout.readline():
            msg: dict[str, Any] = json.loads(raw)
            if msg.get("event") == "ready":
                if self._ready is not None and not self._ready.done():
                    self._ready.set_result(None)
            elif "event" in msg:
                self.on_event(msg)
            elif (waiter := self._waiting.pop(msg.get("id") or 0, None)) is not None:
                if not waiter.done():
                    waiter.set_result(msg)
        err = RuntimeError(f"the executor driver exited\n{self.tail()}")
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(err)
        for waiter in self._waiting.values():
            if not waiter.done():
                waiter.set_exception(err)
        self._waiting.clear()

    def post(self, cmd: str, **args: Any) -> asyncio.Future[dict[str, Any]]:
        """Send a command now (in order with every other); the future holds its reply."""
        assert self.proc is not None and self.proc.stdin is not None
        self._next += 1
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = waiter
        line = json.dumps({"id": self._next, "cmd": cmd, **args}, separators=(",", ":"))
        self.proc.stdin.write(line.encode() + b"\n")
        return waiter

    async def call(self, cmd: str, timeout: float = 30, **args: Any) -> dict[str, Any]:
        reply = await asyncio.wait_for(self.post(cmd, **args), timeout)
        if not reply.get("ok"):
            raise RuntimeError(f"executor driver {cmd} failed: {reply.get('error')}")
        return reply

    async def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        await stop_node_driver(proc, lambda: self.call("close", 10))
        for task in (self._reader, self._drain):
            if task is not None:
                task.cancel()


@dataclass
class ExecutorClient(TimedClient):
    """A `TimedClient` (LiveKit transport, faults, context answers) whose envelopes the
    bridge's executor applies. `shapes` is tldraw's page as of the last `refresh()`."""

    page: list[dict[str, Any]] = field(default_factory=list)
    _node: NodeExecutor | None = None
    _applied_finals: set[tuple[str, str]] = field(default_factory=set)

    @property
    def shapes(self) -> dict[str, dict[str, Any]]:
        return {str(r["id"]): r for r in self.page}

    async def connect(self, *, resync: bool = False) -> None:
        self._node = NodeExecutor(self._on_event)
        await self._node.start()
        await super().connect(resync=resync)

    async def disconnect(self, *, graceful: bool = True) -> None:
        try:
            await super().disconnect(graceful=graceful)
        finally:
            if self._node is not None:
                await self._node.close()

    async def refresh(self, timeout: float = 30) -> list[dict[str, Any]]:
        """Read tldraw's page now (after every envelope handed over so far)."""
        assert self._node is not None
        self.page = list((await self._node.call("page", timeout))["page"])
        return self.page

    async def _gap_watch(self) -> None:
        """The executor's own retry timer asks for gaps (the headless order is unused)."""
        return None

    # -- inbound: past the faults, everything is the executor's ---------------------------
    def _deliver(self, env: ActionEnvelope) -> None:
        assert self._node is not None
        self._node.post("receive", envelopes=[json.loads(env.to_wire())])

    def _on_data(self, packet: rtc.DataPacket) -> None:
        super()._on_data(packet)
        sender = packet.participant.identity if packet.participant is not None else None
        if sender == self.steward_identity and packet.topic == TOPIC_STATUS:
            with contextlib.suppress(ValueError):  # a bad one was logged by the base class
                status = StatusMessage.model_validate_json(packet.data)
                if status.last_seq is not None and self._node is not None:
                    self._node.post("expect", sessionId=status.session_id, lastSeq=status.last_seq)

    async def request_room_resync(self, *, fresh: bool) -> None:
        # As the bridge does after a reconnect or a steward (re)join: `*`, then per session.
        await super().request_room_resync(fresh=fresh)
        if self._node is not None:
            self._node.post("resyncAll")

    def _on_event(self, msg: dict[str, Any]) -> None:
        event = msg["event"]
        if event == "applied":
            self._on_applied(msg)
        elif event == "ack":
            self._forward_ack(msg["body"])
        elif event == "resync":
            self.stats.resyncs_sent += 1
            self._spawn(self._send(json.dumps(msg["body"]).encode(), TOPIC_RESYNC))

    def _on_applied(self, msg: dict[str, Any]) -> None:
        sid, seq, partial = str(msg["sessionId"]), int(msg["seq"]), bool(msg["partial"])
        last = self._last_applied_seq.get(sid, 0)
        if seq != last + 1:
            self.stats.out_of_order_applied += 1
        self._last_applied_seq[sid] = seq
        self.stats.envelopes_applied += 1
        now = time.monotonic()
        for action_id in msg["ids"]:
            if partial:
                self.stats.partials_applied += 1
                continue
            key = (sid, str(action_id))
            if key in self._applied_finals:
                self.stats.duplicates_applied += 1
            self._applied_finals.add(key)
            self.stats.actions_applied += 1
            self.applied_at.setdefault(str(action_id), now)

    def _forward_ack(self, body: dict[str, Any]) -> None:
        f = self.faults
        if f.never_ack:
            self.stats.acks_dropped += 1
            return
        if body.get("applied"):
            self._fault_count["acks"] += 1
            if f.drop_ack_every and self._fault_count["acks"] % f.drop_ack_every == 0:
                self.stats.acks_dropped += 1
                return
        self.stats.acks_sent += 1
        self._spawn(self._send(json.dumps(body).encode(), TOPIC_ACK))


# -- comparing a tldraw page with a mirror ------------------------------------------------
def _close(got: Any, want: Any, path: str, out: list[str]) -> None:
    if isinstance(want, bool) or want is None or isinstance(want, str):
        if got != want:
            out.append(f"{path}: {got!r} != {want!r}")
    elif isinstance(want, (int, float)):
        ok = isinstance(got, (int, float)) and not isinstance(got, bool)
        if not ok or abs(float(got) - float(want)) >= TOLERANCE:
            out.append(f"{path}: {got!r} != {want!r}")
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            out.append(f"{path}: {got!r} != {want!r}")
            return
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _close(g, w, f"{path}[{i}]", out)
    elif isinstance(want, dict):
        if not isinstance(got, dict):
            out.append(f"{path}: {got!r} != {want!r}")
            return
        for k, w in want.items():
            if k == "z":
                continue  # draw pressure: tldraw stores it as Float16 deltas
            _close(got.get(k), w, f"{path}.{k}", out)
    elif got != want:
        out.append(f"{path}: {got!r} != {want!r}")


def _angle(r: float) -> float:
    t = 2 * math.pi
    return ((r % t) + t) % t


def page_disagreements(page: list[dict[str, Any]], mirror: list[dict[str, Any]]) -> list[str]:
    """Where a tldraw page (readPage order) and a mirror (key order = z-order) part; []
    when they agree."""
    out: list[str] = []
    got = {str(r["id"]): r for r in page}
    want = {str(r["id"]): r for r in mirror}
    if set(got) != set(want):
        out.append(
            f"ids: only page {sorted(set(got) - set(want))[:5]}, "
            f"only mirror {sorted(set(want) - set(got))[:5]}"
        )
    # Order among siblings; tldraw keeps a bound arrow just above its targets.
    bound = {
        k
        for k, r in want.items()
        if r["type"] == "arrow" and any((r.get("bindings") or {}).values())
    }

    def siblings(records: list[dict[str, Any]], parent: Any) -> list[str]:
        return [
            str(r["id"])
            for r in records
            if r.get("parentId") == parent and str(r["id"]) not in bound and r["id"] in got
        ]

    for parent in {r.get("parentId") for r in mirror}:
        if siblings(page, parent) != [i for i in siblings(mirror, parent) if i in got]:
            out.append(
                f"order under {parent}: {siblings(page, parent)} != {siblings(mirror, parent)}"
            )
    for sid, w in want.items():
        g = got.get(sid)
        if g is None:
            continue
        if g["type"] != w["type"]:
            out.append(f"{sid}.type: {g['type']} != {w['type']}")
            continue
        _close(g["x"], w["x"], f"{sid}.x", out)
        _close(g["y"], w["y"], f"{sid}.y", out)
        turn = abs(_angle(g["rotation"]) - _angle(w["rotation"])) % (2 * math.pi)
        if min(turn, 2 * math.pi - turn) >= TOLERANCE:
            out.append(f"{sid}.rotation: {g['rotation']} != {w['rotation']}")
        if g.get("parentId") != w.get("parentId"):
            out.append(f"{sid}.parentId: {g.get('parentId')} != {w.get('parentId')}")
        if "bindings" in w and g.get("bindings") != {"start": None, "end": None, **w["bindings"]}:
            out.append(f"{sid}.bindings: {g.get('bindings')} != {w['bindings']}")
        props = dict(w["props"])
        if w["type"] == "text":
            props.pop("w", None)  # tldraw measures auto-sized text itself
        _close(g["props"], props, f"{sid}.props", out)
    return out
