"""An in-memory SessionPort whose 'browser' applies envelopes like the real clients do."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from steward.canvas.mirror import CanvasMirror
from steward.ports import CanvasSnapshot, Picture
from steward.protocol.messages import Box, SessionStatus, WireAction


@dataclass
class FakeSession:
    shapes: list[dict[str, Any]] = field(default_factory=list)
    viewport: Box = field(default_factory=lambda: Box(x=0, y=0, w=1600, h=900))
    selection: list[str] = field(default_factory=list)  # the asker's
    user_changes: list[dict[str, Any]] = field(default_factory=list)  # the asker's
    view_note: str | None = None  # set: the view is not the asker's
    room_id: str = "room-1"
    session_id: str = "s1"
    cancel_after_envelopes: int | None = None
    degraded: bool = False
    envelopes: list[tuple[bool, list[WireAction]]] = field(default_factory=list)
    chats: list[tuple[str, str, bool]] = field(default_factory=list)
    statuses: list[tuple[str, str | None]] = field(default_factory=list)
    context_requests: list[Box | None] = field(default_factory=list)
    picture: Picture | None = None  # what request_picture returns
    picture_requests: list[tuple[Box, int]] = field(default_factory=list)
    browser: CanvasMirror = field(default_factory=CanvasMirror)
    _cancelled: bool = False

    def __post_init__(self) -> None:
        self.browser.load(self.shapes)

    @property
    def canvas(self) -> CanvasMirror:
        return self.browser

    async def request_context(
        self, *, bounds: Box | None = None, want_screenshot: bool = True
    ) -> CanvasSnapshot:
        self.context_requests.append(bounds)
        # As a real browser answers: its reply's viewport is its own, whatever it rendered.
        return CanvasSnapshot(
            viewport=self.viewport,
            selection=list(self.selection),
            user_changes=list(self.user_changes),
            view_note=self.view_note,
            doc_version=len(self.envelopes),
            shapes=self.browser.snapshot(),
            degraded=self.degraded,
        )

    async def request_picture(self, *, bounds: Box, max_size: int) -> Picture | None:
        self.picture_requests.append((bounds, max_size))
        return self.picture

    async def flush_actions(self) -> None:
        return None  # every send here completes before it returns

    async def send_actions(
        self, actions: list[WireAction], *, partial: bool = False, wait: bool = True
    ) -> int:
        # Round-trip through JSON like the wire does.
        wire = [WireAction.model_validate_json(a.to_wire()) for a in actions]
        self.envelopes.append((partial, wire))
        self.browser.apply(wire, partial=partial, session=self.session_id)
        if (
            self.cancel_after_envelopes is not None
            and len(self.envelopes) >= self.cancel_after_envelopes
        ):
            self._cancelled = True
        return len(self.envelopes)

    async def send_chat(
        self,
        text: str,
        *,
        role: str = "assistant",
        partial: bool = False,
        message_id: str | None = None,
    ) -> None:
        self.chats.append((role, text, partial))

    async def send_status(self, status: SessionStatus, detail: str | None = None) -> None:
        self.statuses.append((status, detail))

    def cancelled(self) -> bool:
        return self._cancelled
