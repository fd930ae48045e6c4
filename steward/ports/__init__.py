"""The small interface between the room runtime (transport) and the agents.

It imports only `steward.protocol`, so `steward.room` never imports an agent. The room
runtime implements `SessionPort` for each agent session; agents never import
`steward.room` or LiveKit. The composition root (`steward/service.py`) wires an `AgentRunner`
into the room's sessions (`RoomSessions`, every run in the room).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from steward.protocol.box import Box
from steward.protocol.messages import SessionStatus, WireAction

PromptSource = Literal["browser", "voice", "http", "system"]
# How the words reached the steward, as the model is told: typed in a browser's steward panel,
# sent in the room's text chat (`lk.chat`), spoken, posted over HTTP, or the steward's own.
PromptChannel = Literal["panel", "chat", "voice", "http", "system"]
# Where a context came from: a round trip of its own, the short cache, a prefetch started by
# a composing hint (cached or joined in flight), or the steward's mirror (degraded).
SnapshotSource = Literal["fetched", "cached", "prefetched", "degraded"]


@dataclass(frozen=True)
class PromptInput:
    """A request to act, after intake has authorised and validated it."""

    message: str
    source: PromptSource
    # Who asked: the participant identity (browser, voice) or the API client's name (http);
    # never taken from a payload.
    requester: str
    bounds: Box | None = None
    selection: tuple[str, ...] = ()
    fairy: str | None = None
    # The fairies it is for, in the order picked (empty: none picked; see `PromptRequest`).
    fairies: tuple[str, ...] = ()
    model: str | None = None  # overrides the configured model for this run
    # A browser prompt sent in the room's text chat (`lk.chat`) rather than the panel.
    chat: bool = False

    @property
    def channel(self) -> PromptChannel:
        if self.source == "browser":
            return "chat" if self.chat else "panel"
        return self.source

    @property
    def asker(self) -> str | None:
        """The participant whose view the run sees: browser and voice prompts come from one
        (a voice agent or a speaker, with or without a canvas open); HTTP and system prompts
        have none, and see the host's view."""
        return self.requester if self.source in ("browser", "voice") else None


@dataclass(frozen=True)
class Picture:
    """A small, low-detail image of a canvas area (page coordinates), beside a request's
    screenshot: what a working fairy sees around its task area."""

    bounds: Box
    data: bytes
    media_type: str


@dataclass
class CanvasSnapshot:
    """What the browsers told us about the canvas for one request."""

    viewport: Box
    selection: list[str]
    doc_version: int
    # Shapes in the steward's JSON format (as sent by the host's `agent:context` stream).
    shapes: list[dict[str, Any]] = field(default_factory=list)
    # The screenshot (the asker's browser's, or the host's render of the asker's viewport) and
    # its media type ("image/jpeg" or "image/webp").
    screenshot: bytes | None = None
    screenshot_type: str = "image/jpeg"
    # The asker's own edits since the agent last looked on its behalf: [{id, change}].
    user_changes: list[dict[str, Any]] = field(default_factory=list)
    # True when no browser answered and the run goes on text-only.
    degraded: bool = False
    # The browser that answered (it rendered the screenshot).
    source_identity: str | None = None
    source: SnapshotSource = "fetched"
    # Whose viewport and selection these are: the asker's, or None when the asker has no
    # browser (HTTP, voice with no canvas open) or never shared its view.
    asker: str | None = None
    # Said to the model when the view is not the asker's (whose it is, and what is unknown).
    view_note: str | None = None
    # A working fairy's look around its task area (None: not asked for, or it failed).
    around: Picture | None = None


class CanvasView(Protocol):
    """The room's one canvas, read-only for agents (`steward.canvas.mirror.CanvasMirror`).

    Every action a session sends is applied to it before `send_actions` returns, so an agent
    resolves its next action against the result of its last one.
    """

    @property
    def shapes(self) -> dict[str, dict[str, Any]]:
        """Records by id in z-order (back to front). Never mutate: send actions instead."""
        ...

    @property
    def claims(self) -> set[str]:
        """Ids the room's runs claimed for creates not final yet; every run shares it."""
        ...

    def snapshot(self) -> list[dict[str, Any]]: ...

    def in_flight(self, session: str | None = None) -> list[str]:
        """Ids of `session`'s (None: any session's) actions whose latest version is partial."""
        ...


class SessionPort(Protocol):
    """What an agent session may do in its room."""

    @property
    def room_id(self) -> str: ...

    @property
    def session_id(self) -> str: ...

    @property
    def canvas(self) -> CanvasView:
        """The room's canvas, with this session's sent actions applied."""
        ...

    async def request_context(
        self, *, bounds: Box | None = None, want_screenshot: bool = True
    ) -> CanvasSnapshot:
        """The asker's view: its own browser first, else the host rendering the asker's
        viewport, then other browsers, then a degraded context. Prompts with no browser
        behind them get the host's view, and a `view_note` saying so."""
        ...

    async def request_picture(self, *, bounds: Box, max_size: int) -> Picture | None:
        """A small image of `bounds` (long side at most `max_size` px) from any browser that
        renders, not cached; None when none delivered one in time (never degraded)."""
        ...

    async def send_actions(
        self, actions: list[WireAction], *, partial: bool = False, wait: bool = True
    ) -> int:
        """Sequence, persist and broadcast; returns the last seq used. Never waits for acks.
        `wait=False`: return once applied to the canvas and queued, so the sends of one loop
        turn share one INSERT and one packet; `flush_actions` waits for them (and raises
        what their flush failed with)."""
        ...

    async def flush_actions(self) -> None:
        """Wait until every action sent so far is persisted and handed to LiveKit."""
        ...

    async def send_chat(
        self,
        text: str,
        *,
        role: str = "assistant",
        partial: bool = False,
        message_id: str | None = None,
    ) -> None:
        """A streamed message keeps one `message_id` across its partial versions."""
        ...

    async def send_status(self, status: SessionStatus, detail: str | None = None) -> None: ...

    def cancelled(self) -> bool:
        """True once the session was cancelled (by a user or the system)."""
        ...


class AgentRunner(Protocol):
    """Runs one prompt to completion in a session. Raises asyncio.CancelledError on cancel."""

    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        """Returns the outcome: 'done', 'canceled' or 'error: <reason>'."""
        ...
