"""An in-process `SessionPort` and `SessionFactory` for fairy tests without LiveKit.

Every session applies what it sends to one shared canvas, as the browsers would, and
answers context requests from it. (Tests over a real room use the room runtime instead.)
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.mirror import CanvasMirror
from steward.fairies.projects import ProjectBoard
from steward.fairies.scripted_project import drone_drawing
from steward.ports import CanvasSnapshot, Picture, SessionPort
from steward.protocol.messages import ActionEnvelope, Box, SessionStatus, WireAction
from steward.store.outbox import Outbox

_ids = itertools.count(1)


def planned_per_task(board: ProjectBoard) -> Counter[str]:
    """How many shapes the scripted drones draw for each task of the board, by task id."""
    return Counter(
        {
            t.id: len(drone_drawing({"id": t.id, "title": t.title, "bounds": t.bounds.to_dict()}))
            for t in board.tasks.values()
            if t.bounds is not None
        }
    )


def by_task(ids: list[str]) -> Counter[str]:
    """Shape ids (`<task id>-<n>`, `<task id>-frame`, …) counted by task id."""
    return Counter(i.rsplit("-", 1)[0] for i in ids)


_order = itertools.count(1)


@dataclass
class Browser:
    canvas: CanvasMirror = field(default_factory=CanvasMirror)
    sent: list[tuple[str, int, bool, list[WireAction]]] = field(default_factory=list)
    chat: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    outbox: Outbox | None = None  # when set, envelopes are written like the room runtime does
    selection: list[str] = field(default_factory=list)  # what this browser has selected


class BrowserSession:
    """A fairy's session: what it sends lands on the shared `Browser` canvas at once."""

    def __init__(
        self, browser: Browser, room_id: str, fairy: str, *, session_id: str | None = None
    ) -> None:
        self.browser = browser
        self._room = room_id
        self._id = session_id or f"s{next(_ids)}-{fairy}"
        # A reopened session continues its seq, as the broadcaster does from the outbox.
        self.seq = max((seq for sid, seq, _, _ in browser.sent if sid == self._id), default=0)
        self._cancelled = False

    @property
    def room_id(self) -> str:
        return self._room

    @property
    def session_id(self) -> str:
        return self._id

    @property
    def canvas(self) -> CanvasMirror:
        return self.browser.canvas

    async def request_context(
        self, *, bounds: Box | None = None, want_screenshot: bool = True
    ) -> CanvasSnapshot:
        shapes: list[dict[str, Any]] = self.browser.canvas.snapshot()
        return CanvasSnapshot(
            viewport=Box(x=0, y=0, w=1600, h=900),
            selection=list(self.browser.selection),
            doc_version=0,
            shapes=shapes,
        )

    async def request_picture(self, *, bounds: Box, max_size: int) -> Picture | None:
        return None  # no browser here renders images

    async def flush_actions(self) -> None:
        return None  # every send here completes before it returns

    async def send_actions(
        self, actions: list[WireAction], *, partial: bool = False, wait: bool = True
    ) -> int:
        self.seq += 1
        self.browser.sent.append((self._id, self.seq, partial, actions))
        if self.browser.outbox is not None:
            env = ActionEnvelope(
                session_id=self._id, seq=self.seq, partial=partial or None, actions=actions, ts=0
            )
            await self.browser.outbox.append(
                self._room, self._id, self.seq, next(_order), partial, env.to_wire().decode()
            )
        self.browser.canvas.apply(actions, partial=partial, session=self._id)
        return self.seq

    async def send_chat(
        self,
        text: str,
        *,
        role: str = "assistant",
        partial: bool = False,
        message_id: str | None = None,
    ) -> None:
        self.browser.chat.append(text)

    async def send_status(self, status: SessionStatus, detail: str | None = None) -> None:
        return None

    def cancelled(self) -> bool:
        return self._cancelled


class BrowserSessions:
    """The `SessionFactory` of `BrowserSession`s over one `Browser`."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser

    async def open_session(
        self, room_id: str, fairy_id: str, *, resume: str | None = None
    ) -> SessionPort:
        s = BrowserSession(self.browser, room_id, fairy_id, session_id=resume)
        self.browser.opened.append(s.session_id)
        return s

    async def close_session(self, session: SessionPort, outcome: str) -> None:
        self.browser.closed.append(session.session_id)
