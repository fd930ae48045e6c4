"""A headless reference client: joins a room like a browser, with fault-injection knobs.

It announces capabilities in its token attributes, keeps an in-memory canvas, applies
envelopes in seq order exactly once per (session, action id) through a gap buffer, acks after
applying, resyncs after joining and after a reconnect, and answers `steward.context` with a
small JSON reply plus a synthetic JPEG (fitted to the request's `maxBytes`) and the shapes
JSON (gzip-compressed unless `shapes_gzip` is off) as byte streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import json
import os
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from livekit import rtc
from pydantic import JsonValue

from steward import ffi_router
from steward.access import mint_token
from steward.canvas.mirror import CanvasMirror
from steward.obs.logging import get_logger
from steward.protocol.box import Box
from steward.protocol.limits import ACK_DELAY_MS, DEFAULT_SCREENSHOT_MAX_BYTES
from steward.protocol.messages import (
    FINAL_STATUSES,
    Ack,
    ActionEnvelope,
    CancelReply,
    CancelRequest,
    CanvasEdit,
    ChatMessage,
    ComposingHint,
    ContextCounts,
    ContextReply,
    ContextRequest,
    EnvelopeBatch,
    FairiesMessage,
    PromptReply,
    PromptRequest,
    Resync,
    RevertReply,
    RevertRequest,
    StatusMessage,
    ViewportUpdate,
    WireAction,
)
from steward.protocol.names import (
    ATTR_CAPABILITIES,
    ATTR_READY,
    RESYNC_ALL_SESSIONS,
    RPC_CANCEL,
    RPC_CONTEXT,
    RPC_PROMPT,
    RPC_REVERT,
    SCREENSHOT_TYPE_JPEG,
    SCREENSHOT_TYPE_WEBP,
    SHAPES_TYPE_GZIP,
    SHAPES_TYPE_JSON,
    STREAM_ATTR_REQUEST_ID,
    TOPIC_ACK,
    TOPIC_ACTION,
    TOPIC_ACTIONS,
    TOPIC_CHAT,
    TOPIC_COMPOSING,
    TOPIC_CONTEXT,
    TOPIC_EDIT,
    TOPIC_FAIRIES,
    TOPIC_RESYNC,
    TOPIC_SCREENSHOT,
    TOPIC_STATUS,
    TOPIC_VIEWPORT,
)
from steward.room.outbound.envelopes import FragmentAssembler, is_fragment
from steward.task_set import TaskSet
from steward_tools.headless.acks import AckCoalescer
from steward_tools.headless.gap_buffer import GapBuffer
from steward_tools.headless.synthetic_jpeg import Fitted, fit_jpeg, render_canvas

log = get_logger(__name__)

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# png_screenshot: a PNG sent as image/png; mislabelled_screenshot: the JPEG sent as image/webp.
ContextMode = Literal[
    "ok",
    "no_screenshot",
    "error",
    "hang",
    "png_screenshot",
    "mislabelled_screenshot",
    "gzip_bomb",  # shapes: a small gzip stream inflating to 64 MiB of zeros
    "oversized_screenshot",  # a screenshot four times the byte budget asked for
    # shapes: the gzip bomb; screenshot: 5 MiB of noise behind a JPEG header, announced
    "bomb_and_fake_jpeg",
]


@dataclass
class Faults:
    """Injected at this client. Counters run over first arrivals of live envelopes."""

    drop_every: int = 0  # drop every Nth envelope on first arrival (a retransmit gets through)
    duplicate_every: int = 0  # deliver every Nth envelope twice
    # Hold every Nth envelope back until the next one has arrived (or `reorder_hold_s` has
    # passed: a reordering network delays a packet, it does not lose the last one).
    reorder_every: int = 0
    reorder_hold_s: float = 0.25
    drop_ack_every: int = 0  # lose the ack of every Nth applied envelope
    never_ack: bool = False  # a peer that acks nothing, not even retransmits
    ack_delay_s: float = 0.0  # a busy browser: every ack leaves this long after the apply
    context_mode: ContextMode = "ok"
    # Every Nth context request is answered honestly whatever `context_mode` says (a hostile
    # host keeping up appearances).
    honest_every: int = 0


@functools.cache
def _gzip_bomb() -> bytes:
    return gzip.compress(b"\0" * (64 << 20), 9)


FAKE_JPEG_BYTES = 5 << 20


@functools.cache
def _fake_jpeg() -> bytes:
    """A JPEG's first bytes, then noise (it does not compress) up to FAKE_JPEG_BYTES."""
    return b"\xff\xd8\xff\xe0" + os.urandom(FAKE_JPEG_BYTES - 4)


@dataclass
class ClientStats:
    """What a headless client counted: envelopes and actions received and applied, duplicates, drops
    and acks."""

    envelopes_received: int = 0
    envelopes_applied: int = 0
    actions_applied: int = 0  # final versions of actions (partials not counted)
    partials_applied: int = 0
    duplicates_applied: int = 0  # a final version applied twice: must stay 0
    out_of_order_applied: int = 0  # an envelope applied out of seq order: must stay 0
    duplicates_received: int = 0
    dropped: int = 0
    acks_sent: int = 0
    acks_dropped: int = 0
    resyncs_sent: int = 0
    resyncs_delivered: int = 0  # LiveKit confirmed the request left (a diagnostic)
    context_requests: int = 0


@dataclass
class HeadlessClient:
    """A headless participant that joins a room as a browser does, applies envelopes in order and
    acks them."""

    url: str
    token: str
    identity: str
    steward_identity: str = "canvas-steward"
    capabilities: tuple[str, ...] = ("context", "screenshot", "apply")
    faults: Faults = field(default_factory=Faults)
    gap_resync_s: float = 1.0
    room: rtc.Room = field(default_factory=rtc.Room)
    replica: CanvasMirror = field(default_factory=CanvasMirror)
    stats: ClientStats = field(default_factory=ClientStats)
    statuses: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    chat: list[ChatMessage] = field(default_factory=list)
    fairies: FairiesMessage | None = None  # the latest fairy presence (`agent:fairies`)
    doc_version: int = 0
    reconnects: int = 0
    order: GapBuffer = field(default_factory=GapBuffer)
    _fragments: FragmentAssembler = field(default_factory=FragmentAssembler)
    _finals: set[tuple[str, str]] = field(default_factory=set)
    _last_applied_seq: dict[str, int] = field(default_factory=dict)
    _fault_seen: set[tuple[str, int]] = field(default_factory=set)
    _fault_count: Counter[str] = field(default_factory=Counter)
    _held_back: ActionEnvelope | None = None
    # Acks wait up to this long and leave as one cumulative ack per session (acks.py).
    ack_delay_s: float = ACK_DELAY_MS / 1000
    _acks: AckCoalescer | None = None
    # Called with every envelope from the steward as it arrives (before faults and ordering).
    on_arrival: Callable[[ActionEnvelope], None] | None = None
    _tasks: TaskSet = field(default_factory=lambda: TaskSet("headless_task_failed"))
    _status_event: asyncio.Event = field(default_factory=asyncio.Event)
    # Send the shapes JSON gzip-compressed (as browsers do); False: plain JSON.
    shapes_gzip: bool = True
    last_screenshot: Fitted | None = None  # the encoding chosen for the last screenshot
    # This user's camera and selection (page coordinates), as a browser publishes them.
    viewport: Box = field(default_factory=lambda: Box(x=0, y=0, w=1280, h=800))
    selection: list[str] = field(default_factory=list)
    # The bounds each context request asked this client to render (None: its own viewport).
    context_bounds: list[Box | None] = field(default_factory=list)
    # Host mode: this user's own edits since the steward last asked for them (`user_changes`).
    user_changes: dict[str, str] = field(default_factory=dict)
    _jpeg_cache: tuple[tuple[int, float, int], Fitted] | None = None

    # --- construction --------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        url: str,
        api_key: str,
        api_secret: str,
        *,
        room: str,
        identity: str,
        capabilities: tuple[str, ...] = ("context", "screenshot", "apply"),
        can_prompt: bool = True,
        moderator: bool = False,
        steward_identity: str = "canvas-steward",
        faults: Faults | None = None,
    ) -> HeadlessClient:
        token = mint_token(
            api_key,
            api_secret,
            room=room,
            identity=identity,
            capabilities=capabilities,
            can_prompt=can_prompt,
            moderator=moderator,
        )
        return cls(
            url=url,
            token=token,
            identity=identity,
            steward_identity=steward_identity,
            capabilities=capabilities,
            faults=faults or Faults(),
        )

    @property
    def shapes(self) -> dict[str, dict[str, Any]]:
        return self.replica.shapes

    async def connect(self, *, resync: bool = False) -> None:
        """Join. The steward replays the room's history to new browsers by itself; `resync`
        also asks for it explicitly (a full `*` resync)."""
        # As the steward does: a client's CPU is measured too.
        ffi_router.set_native_log_capture(False)
        self.room.on("data_received", self._on_data)
        self.room.on("reconnected", self._on_reconnected)
        self.room.on("participant_connected", self._on_participant_connected)
        await self.room.connect(self.url, self.token)
        ffi_router.narrow_room_events(self.room)
        lp = self.room.local_participant
        lp.register_rpc_method(RPC_CONTEXT, self._on_context)
        # An attribute change is announced at once (a plain join can take up to 3 s).
        await lp.set_attributes(
            {ATTR_CAPABILITIES: ",".join(self.capabilities), ATTR_READY: str(_now_ms())}
        )
        self._spawn(self._gap_watch())
        if resync:
            await self.request_room_resync(fresh=True)

    async def disconnect(self, *, graceful: bool = True) -> None:
        """Leave. Graceful: first withdraw capabilities, which the steward sees at once (a
        leave itself may be announced seconds later), so a new host is elected quickly."""
        if self._acks is not None:
            self._acks.close()
        self._tasks.cancel()
        if graceful and self.room.isconnected():
            with contextlib.suppress(Exception):
                await self.room.local_participant.set_attributes({ATTR_CAPABILITIES: ""})
        await self.room.disconnect()

    def _spawn(self, coro: Any) -> None:
        self._tasks.spawn(coro)

    # --- outbound ------------------------------------------------------------------------
    async def _send(self, payload: bytes, topic: str, *, delay_s: float = 0.0) -> None:
        if delay_s:
            await asyncio.sleep(delay_s)
        await ffi_router.publish(
            self.room.local_participant,
            payload,
            topic=topic,
            destinations=[self.steward_identity],
        )

    async def request_room_resync(self, *, fresh: bool) -> None:
        msg = Resync(session_id=RESYNC_ALL_SESSIONS, last_seq=0 if fresh else 1)
        self.stats.resyncs_sent += 1
        await self._send(msg.to_wire(), TOPIC_RESYNC)
        self.stats.resyncs_delivered += 1

    async def request_resync(self, session_id: str) -> None:
        msg = Resync(session_id=session_id, last_seq=self.order.last_seq(session_id))
        self.stats.resyncs_sent += 1
        await self._send(msg.to_wire(), TOPIC_RESYNC)
        self.stats.resyncs_delivered += 1

    async def composing(self, bounds: Box | None = None) -> None:
        """The user started typing a prompt; `bounds` must be the ones the prompt will carry."""
        await self._send(ComposingHint(bounds=bounds, ts=time.time()).to_wire(), TOPIC_COMPOSING)

    async def set_view(self, viewport: Box, selection: list[str] | None = None) -> None:
        """The user pans or selects: publish `canvas:viewport`, as a browser does."""
        self.viewport = viewport
        self.selection = list(selection or [])
        update = ViewportUpdate(viewport=viewport, selection=self.selection, ts=time.time())
        await self._send(update.to_wire(), TOPIC_VIEWPORT)

    async def prompt(self, message: str, **kw: Any) -> PromptReply:
        raw = await self.room.local_participant.perform_rpc(
            destination_identity=self.steward_identity,
            method=RPC_PROMPT,
            payload=PromptRequest(message=message, **kw).to_wire().decode(),
        )
        return PromptReply.model_validate_json(raw)

    async def prompt_raw(self, payload: str) -> PromptReply:
        """An unvalidated prompt payload (for tests of the steward's input checks)."""
        raw = await self.room.local_participant.perform_rpc(
            destination_identity=self.steward_identity, method=RPC_PROMPT, payload=payload
        )
        return PromptReply.model_validate_json(raw)

    async def cancel(self, session_id: str) -> CancelReply:
        raw = await self.room.local_participant.perform_rpc(
            destination_identity=self.steward_identity,
            method=RPC_CANCEL,
            payload=CancelRequest(session_id=session_id).to_wire().decode(),
        )
        return CancelReply.model_validate_json(raw)

    async def revert(self, session_id: str) -> RevertReply:
        raw = await self.room.local_participant.perform_rpc(
            destination_identity=self.steward_identity,
            method=RPC_REVERT,
            payload=RevertRequest(session_id=session_id).to_wire().decode(),
        )
        return RevertReply.model_validate_json(raw)

    async def edit(self, put: list[dict[str, Any]], remove: list[str] | None = None) -> None:
        """A user edit: relayed through the steward (the echo is applied like any envelope)."""
        await self._send(CanvasEdit(put=put, remove=remove or []).to_wire(), TOPIC_EDIT)

    def local_edit(self, put: list[dict[str, Any]], remove: list[str] | None = None) -> None:
        """Host mode: a user edit the app's own sync carries (the steward never sees it); it
        is reported as this user's change when the steward asks for `user_changes`."""
        for record in put:
            sid = str(record["id"])
            before = self.user_changes.get(sid)
            created = before == "created" or sid not in self.shapes
            self.user_changes[sid] = "created" if created else "updated"
        gone = set(remove or [])
        for sid in gone:
            self.user_changes[sid] = "deleted"
        self.replica.load([*(s for s in self.shapes.values() if s["id"] not in gone), *put])
        self.doc_version += 1

    async def send_raw(self, payload: bytes, topic: str) -> None:
        await self._send(payload, topic)

    async def simulate_full_reconnect(self) -> None:
        await self.room.simulate_scenario(rtc.SimulateScenarioKind.SIMULATE_FULL_RECONNECT)

    # --- waiting -------------------------------------------------------------------------
    async def wait_status(self, session_id: str, timeout: float = 20.0) -> str:
        """Wait for the session's terminal status (done, canceled, error)."""

        async def wait() -> str:
            while True:
                for status in self.statuses.get(session_id, []):
                    if status in FINAL_STATUSES:
                        return status
                self._status_event.clear()
                await self._status_event.wait()

        return await asyncio.wait_for(wait(), timeout)

    def applied_seq(self, session_id: str) -> int:
        return self.order.last_seq(session_id)

    def announced_last_seq(self, session_id: str) -> int:
        """The last seq the session's final status named (0 before it came)."""
        return self.order.expected_seq(session_id)

    # --- inbound -------------------------------------------------------------------------
    def _on_reconnected(self) -> None:
        self.reconnects += 1
        self._spawn(self.request_room_resync(fresh=False))

    def _on_participant_connected(self, p: rtc.RemoteParticipant) -> None:
        # As the bridge does: a (re)started steward may have died before resending what this
        # client missed at the end of a session, where no later envelope reveals the gap.
        if p.identity == self.steward_identity:
            self._spawn(self.request_room_resync(fresh=False))

    def _on_data(self, packet: rtc.DataPacket) -> None:
        sender = packet.participant.identity if packet.participant is not None else None
        if sender != self.steward_identity:
            return
        topic = packet.topic or ""
        try:
            if topic == TOPIC_ACTION:
                env = ActionEnvelope.model_validate_json(packet.data)
                self._on_envelope_arrival(env)
            elif topic == TOPIC_ACTIONS:  # several envelopes in one packet, in send order
                for env in EnvelopeBatch.model_validate_json(packet.data).envelopes:
                    self._on_envelope_arrival(env)
            elif topic == TOPIC_STATUS:
                status = StatusMessage.model_validate_json(packet.data)
                if status.last_seq is not None:  # a trailing envelope we lack is a gap too
                    self.order.expect(status.session_id, status.last_seq)
                self.statuses[status.session_id].append(status.status)
                self._status_event.set()
            elif topic == TOPIC_CHAT:
                self.chat.append(ChatMessage.model_validate_json(packet.data))
            elif topic == TOPIC_FAIRIES:
                self.fairies = FairiesMessage.model_validate_json(packet.data)
        except ValueError as err:
            log.warning("headless_bad_message", topic=topic, error=str(err)[:200])

    def _on_envelope_arrival(self, env: ActionEnvelope) -> None:
        """Fault injection sits between the network and the ordering layer."""
        self.stats.envelopes_received += 1
        if self.on_arrival is not None:
            self.on_arrival(env)
        key = (env.session_id, env.seq)
        first = key not in self._fault_seen
        self._fault_seen.add(key)
        f = self.faults
        if first:
            self._fault_count["live"] += 1
            n = self._fault_count["live"]
            if f.drop_every and n % f.drop_every == 0:
                self.stats.dropped += 1
                return
            if f.reorder_every and n % f.reorder_every == 0 and self._held_back is None:
                self._held_back = env
                self._spawn(self._release_held(env, f.reorder_hold_s))
                return
            self._deliver(env)
            if f.duplicate_every and n % f.duplicate_every == 0:
                self._deliver(env)
            if self._held_back is not None and self._held_back is not env:
                held, self._held_back = self._held_back, None
                self._deliver(held)
            return
        self._deliver(env)

    async def _release_held(self, env: ActionEnvelope, after_s: float) -> None:
        await asyncio.sleep(after_s)
        if self._held_back is env:  # nothing came after it
            self._held_back = None
            self._deliver(env)

    def _deliver(self, env: ActionEnvelope) -> None:
        offer = self.order.offer(env)
        if offer.duplicate:
            self.stats.duplicates_received += 1
            # The steward may have lost our ack: ack again, never apply again.
            self._ack(env, applied=[])
            return
        for ready in offer.ready:
            self._apply(ready)
            self._ack(ready, applied=[a.id for a in ready.actions])

    def _apply(self, env: ActionEnvelope) -> None:
        last = self._last_applied_seq.get(env.session_id, 0)
        if env.seq != last + 1:
            self.stats.out_of_order_applied += 1
        self._last_applied_seq[env.session_id] = env.seq
        partial = bool(env.partial)
        for action in env.actions:
            if is_fragment(action.params):
                params = self._fragments.add(action.id, action.params)
                if params is None:
                    continue
                action = WireAction(id=action.id, name=action.name, params=params)
            key = (env.session_id, action.id)
            if partial:
                self.stats.partials_applied += 1
            else:
                if key in self._finals:
                    self.stats.duplicates_applied += 1
                self._finals.add(key)
                self.stats.actions_applied += 1
            self.replica.apply_one(action, partial=partial, session=env.session_id)
        self.doc_version += 1
        self.stats.envelopes_applied += 1

    def _ack(self, env: ActionEnvelope, applied: list[str]) -> None:
        f = self.faults
        if f.never_ack:
            self.stats.acks_dropped += 1
            return
        if applied:
            self._fault_count["acks"] += 1
            if f.drop_ack_every and self._fault_count["acks"] % f.drop_ack_every == 0:
                self.stats.acks_dropped += 1
                return
        ack = Ack(session_id=env.session_id, seq=env.seq, applied=applied, applied_at=time.time())
        if self._acks is None:
            self._acks = AckCoalescer(self._send_ack, self.ack_delay_s)
        self._acks.add(ack)

    def _send_ack(self, ack: Ack) -> None:
        self.stats.acks_sent += 1
        self._spawn(self._send(ack.to_wire(), TOPIC_ACK, delay_s=self.faults.ack_delay_s))

    async def _gap_watch(self) -> None:
        """A gap that stays open asks for a resync (the steward also retransmits on its own)."""
        while True:
            await asyncio.sleep(self.gap_resync_s / 2)
            for session_id in self.order.stalled(self.gap_resync_s):
                with contextlib.suppress(Exception):
                    await self.request_resync(session_id)

    # --- context -------------------------------------------------------------------------
    async def _on_context(self, inv: rtc.RpcInvocationData) -> str:
        self.stats.context_requests += 1
        req = ContextRequest.model_validate_json(inv.payload)
        self.context_bounds.append(req.bounds)
        mode = self.faults.context_mode
        honest = self.faults.honest_every
        if honest and self.stats.context_requests % honest == 0:
            mode = "ok"
        if mode == "error":
            raise rtc.RpcError(1500, "context unavailable (injected)")
        if mode == "hang":
            await asyncio.sleep(3600)
        want_shot = "screenshot" in req.want and mode != "no_screenshot"
        want_shapes = "shapes" in req.want
        streams: list[Literal["screenshot", "shapes"]] = []
        if "screenshot" in req.want:
            streams.append("screenshot")  # announced even when injected to never arrive
        if want_shapes:
            streams.append("shapes")
        reply = ContextReply(
            request_id=req.request_id,
            viewport=self.viewport,
            selection=list(self.selection),
            doc_version=self.doc_version,
            counts=ContextCounts(shapes=len(self.shapes)),
            streams=streams,
        )
        if "user_changes" in req.want:
            changes: list[dict[str, JsonValue]] = [
                {"id": sid, "change": c} for sid, c in self.user_changes.items()
            ]
            reply = reply.model_copy(update={"user_changes": changes})
            self.user_changes = {}
        self._spawn(
            self._send_context_streams(inv.caller_identity, req, want_shot, want_shapes, mode)
        )
        return reply.to_wire().decode()

    async def _send_context_streams(
        self, caller: str, req: ContextRequest, shot: bool, shapes: bool, mode: ContextMode
    ) -> None:
        attrs = {STREAM_ATTR_REQUEST_ID: req.request_id}
        lp = self.room.local_participant
        sends = []
        if shapes:
            data = json.dumps(list(self.shapes.values())).encode()
            mime_type, name = SHAPES_TYPE_JSON, "shapes.json"
            if self.shapes_gzip:
                data, mime_type, name = gzip.compress(data, 6), SHAPES_TYPE_GZIP, "shapes.json.gz"
            if mode in ("gzip_bomb", "bomb_and_fake_jpeg"):
                data, mime_type, name = _gzip_bomb(), SHAPES_TYPE_GZIP, "shapes.json.gz"
            sends.append(
                lp.send_bytes(
                    data,
                    topic=TOPIC_CONTEXT,
                    name=name,
                    mime_type=mime_type,
                    destination_identities=[caller],
                    attributes=attrs,
                )
            )
        if shot:
            image = self.screenshot(req.max_size, req.max_bytes)
            mime_type, name = SCREENSHOT_TYPE_JPEG, "canvas.jpg"
            if mode == "png_screenshot":
                image, mime_type, name = _PNG_SIGNATURE + image, "image/png", "canvas.png"
            elif mode == "mislabelled_screenshot":
                mime_type, name = SCREENSHOT_TYPE_WEBP, "canvas.webp"
            elif mode == "oversized_screenshot":
                budget = req.max_bytes or DEFAULT_SCREENSHOT_MAX_BYTES
                image += b"\0" * max(0, 4 * budget - len(image))
            elif mode == "bomb_and_fake_jpeg":
                image = _fake_jpeg()
            sends.append(
                lp.send_bytes(
                    image,
                    topic=TOPIC_SCREENSHOT,
                    name=name,
                    mime_type=mime_type,
                    destination_identities=[caller],
                    attributes=attrs,
                )
            )
        # Both streams at once, as a browser would: the steward waits for the slower one.
        await asyncio.gather(*sends)

    def screenshot(self, max_size: int | None = None, max_bytes: int | None = None) -> bytes:
        """A JPEG of a 1280x800 viewport, long edge scaled to fit `max_size`, quality then
        scale lowered until it fits `max_bytes` (as browsers do; absent: the default)."""
        scale = min(1.0, (max_size or 1280) / 1280)
        budget = max_bytes or DEFAULT_SCREENSHOT_MAX_BYTES
        key = (self.doc_version, scale, budget)
        if self._jpeg_cache is None or self._jpeg_cache[0] != key:
            image = render_canvas(
                self.shapes,
                seed=self.doc_version,
                width=round(1280 * scale),
                height=round(800 * scale),
                scale=scale,
            )
            self._jpeg_cache = (key, fit_jpeg(image, budget))
        self.last_screenshot = self._jpeg_cache[1]
        return self._jpeg_cache[1].data


def _now_ms() -> int:
    return int(time.time() * 1000)


def new_identity(prefix: str = "browser") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"
