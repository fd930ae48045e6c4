"""The in-memory `SessionPort` (and `SessionFactory`) that tests and benches run agents on.

A `MemoryRoom` stands for one room's browsers: every session opened on it sends to the same
canvas. What a session sends is applied to the room's canvas (`canvas`, what agents resolve
against) as sent, and to a client's canvas (`browser`) only as it survives the wire: packed
into envelopes with the broadcaster's packer, encoded, decoded with the protocol decoder,
fragments joined, as browsers apply it. Anything an agent lets escape (an envelope that does
not encode or decode, an oversize one, an op a client cannot apply) raises `EscapeError`
here instead of in a browser, and the two canvases must never diverge. Context requests are
answered from the client's canvas with the room's viewport and selection. Tests over a real
room use the room runtime instead.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from steward.canvas.mirror import CanvasMirror, withdrawals
from steward.ports import CanvasSnapshot, Picture, SessionPort
from steward.protocol import ProtocolError, decode
from steward.protocol.box import Box
from steward.protocol.limits import MAX_ENVELOPE_BYTES
from steward.protocol.messages import ActionEnvelope, SessionStatus, WireAction
from steward.room.outbound.envelopes import FragmentAssembler, is_fragment, pack
from steward.store.outbox import Outbox

_session_ids = itertools.count(1)


class EscapeError(AssertionError):
    """Something invalid left the agent towards the browsers."""


class Sent(NamedTuple):
    """One `send_actions` call: its session, the seq of its last envelope, whether partial,
    and the actions as a browser decoded them."""

    session_id: str
    seq: int
    partial: bool
    actions: list[WireAction]


class Said(NamedTuple):
    """One `send_chat` call."""

    session_id: str
    role: str
    text: str
    partial: bool


@dataclass
class MemoryRoom:
    """One room's browsers as one: the canvas they share, the asker's view, and every send."""

    shapes: list[dict[str, Any]] = field(default_factory=list)  # the canvas at the start
    viewport: Box = field(default_factory=lambda: Box(x=0, y=0, w=1600, h=900))
    selection: list[str] = field(default_factory=list)  # the asker's
    user_changes: list[dict[str, Any]] = field(default_factory=list)  # the asker's
    view_note: str | None = None  # set: the view is not the asker's
    degraded: bool = False
    picture: Picture | None = None  # what a browser renders when asked for a picture
    picture_requests: list[tuple[Box, int]] = field(default_factory=list)
    outbox: Outbox | None = None  # set: envelopes are written as the room runtime writes them
    canvas: CanvasMirror = field(default_factory=CanvasMirror)  # the room's
    browser: CanvasMirror = field(default_factory=CanvasMirror)  # a client's
    sent: list[Sent] = field(default_factory=list)
    said: list[Said] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    envelopes: int = 0  # envelopes that crossed the wire, every session's
    _order: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _fragments: FragmentAssembler = field(default_factory=FragmentAssembler)

    def __post_init__(self) -> None:
        if self.shapes:  # else the canvases as given (one room's, shared with another)
            self.canvas.load(self.shapes)
            self.browser.load(self.shapes)

    @property
    def chat(self) -> list[str]:
        """The text of every chat message, every session's, in order."""
        return [s.text for s in self.said]

    async def deliver(
        self, room_id: str, session_id: str, seq: int, actions: list[WireAction], partial: bool
    ) -> tuple[int, list[WireAction]]:
        """Send `actions` over the wire as the broadcaster would, from `seq` on: (the last
        seq, the actions as the browser decoded and applied them)."""
        self.canvas.apply(actions, partial=partial, session=session_id)
        decoded: list[WireAction] = []
        for group in pack(session_id, actions, partial=partial):
            seq += 1
            env = ActionEnvelope(
                session_id=session_id, seq=seq, partial=partial or None, actions=group, ts=0.0
            )
            try:
                payload = env.to_wire()
            except ValueError as err:  # e.g. NaN or a lone surrogate in params
                raise EscapeError(f"envelope does not encode: {err}") from err
            if len(payload) > MAX_ENVELOPE_BYTES:
                raise EscapeError(f"envelope of {len(payload)} bytes")
            back = decode(ActionEnvelope, payload, topic="agent:action", max_bytes=len(payload))
            if isinstance(back, ProtocolError):
                raise EscapeError(f"envelope does not decode: {back}")
            self.envelopes += 1
            if self.outbox is not None:
                await self.outbox.append(
                    room_id, session_id, seq, next(self._order), partial, payload.decode()
                )
            for action in back.actions:
                if is_fragment(action.params):
                    params = self._fragments.add(action.id, action.params)
                    if params is None:
                        continue
                    action = WireAction(id=action.id, name=action.name, params=params)
                self.browser.apply_one(action, partial=bool(back.partial), session=session_id)
                decoded.append(action)
        return seq, decoded


class MemorySession:
    """One session in a `MemoryRoom` (a room of its own when none is given)."""

    def __init__(
        self,
        room: MemoryRoom | None = None,
        *,
        room_id: str = "room-1",
        session_id: str | None = None,
        fairy: str = "agent",
        cancel_after_envelopes: int | None = None,
    ) -> None:
        self.room = room if room is not None else MemoryRoom()
        self._room_id = room_id
        self._id = session_id or f"s{next(_session_ids)}-{fairy}"
        # A reopened session continues its seq, as the broadcaster does from the outbox.
        self.seq = max((s.seq for s in self.room.sent if s.session_id == self._id), default=0)
        self.cancel_after_envelopes = cancel_after_envelopes
        self.statuses: list[tuple[str, str | None]] = []
        self.context_requests: list[Box | None] = []
        self._cancelled = False

    @property
    def room_id(self) -> str:
        return self._room_id

    @property
    def session_id(self) -> str:
        return self._id

    @property
    def canvas(self) -> CanvasMirror:
        return self.room.canvas

    @property
    def browser(self) -> CanvasMirror:
        """A client's canvas: what survived the wire."""
        return self.room.browser

    @property
    def envelopes(self) -> list[tuple[bool, list[WireAction]]]:
        """This session's `send_actions` calls: (partial, the actions as decoded)."""
        return [(s.partial, s.actions) for s in self.room.sent if s.session_id == self._id]

    @property
    def chats(self) -> list[tuple[str, str, bool]]:
        """This session's chat messages: (role, text, partial)."""
        return [(s.role, s.text, s.partial) for s in self.room.said if s.session_id == self._id]

    def cancel(self) -> None:
        self._cancelled = True

    async def request_context(
        self, *, bounds: Box | None = None, want_screenshot: bool = True
    ) -> CanvasSnapshot:
        self.context_requests.append(bounds)
        room = self.room
        # As a real browser answers: its reply's viewport is its own, whatever it rendered.
        return CanvasSnapshot(
            viewport=room.viewport,
            selection=list(room.selection),
            user_changes=list(room.user_changes),
            view_note=room.view_note,
            doc_version=self.seq,
            shapes=room.browser.snapshot(),
            degraded=room.degraded,
        )

    async def request_picture(self, *, bounds: Box, max_size: int) -> Picture | None:
        self.room.picture_requests.append((bounds, max_size))
        return self.room.picture

    async def flush_actions(self) -> None:
        return None  # every send here completes before it returns

    async def send_actions(
        self, actions: list[WireAction], *, partial: bool = False, wait: bool = True
    ) -> int:
        self.seq, decoded = await self.room.deliver(
            self._room_id, self._id, self.seq, actions, partial
        )
        self.room.sent.append(Sent(self._id, self.seq, partial, decoded))
        if (
            self.cancel_after_envelopes is not None
            and len(self.envelopes) >= self.cancel_after_envelopes
        ):
            self._cancelled = True
        return self.seq

    async def send_chat(
        self,
        text: str,
        *,
        role: str = "assistant",
        partial: bool = False,
        message_id: str | None = None,
    ) -> None:
        self.room.said.append(Said(self._id, role, text, partial))

    async def send_status(self, status: SessionStatus, detail: str | None = None) -> None:
        self.statuses.append((status, detail))

    def cancelled(self) -> bool:
        return self._cancelled


class MemorySessions:
    """The `SessionFactory` of `MemorySession`s in one `MemoryRoom`."""

    def __init__(self, room: MemoryRoom) -> None:
        self.room = room

    async def open_session(
        self, room_id: str, fairy_id: str, *, resume: str | None = None
    ) -> SessionPort:
        session = MemorySession(self.room, room_id=room_id, session_id=resume, fairy=fairy_id)
        self.room.opened.append(session.session_id)
        if resume is not None:  # as the room does: what the dead run left in flight is withdrawn
            ids = self.room.canvas.in_flight(resume)
            if ids:
                await session.send_actions(withdrawals(ids, "reverted after a restart"))
        return session

    async def close_session(self, session: SessionPort, outcome: str) -> None:
        self.room.closed.append(session.session_id)
