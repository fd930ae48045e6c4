"""One agent session's view of its room: the `SessionPort` the fairies talk to."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from steward.canvas.quality import QualityReport, RunShapes, quality_report
from steward.ports import CanvasSnapshot, CanvasView, Picture, PromptInput
from steward.protocol.box import Box
from steward.protocol.messages import FINAL_STATUSES, SessionStatus, WireAction
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.outbound.broadcaster import Broadcaster
from steward.room.outbound.messenger import Messenger

# Wire verbs a person reads as a run's thoughts (they change nothing on the canvas).
THOUGHT_VERBS = frozenset({"think", "add_detail"})


@dataclass
class SessionFigures:
    """What the end-of-session log line reports, beyond the broadcaster's stream stats."""

    started_at: float = field(default_factory=time.monotonic)
    context_requests: int = 0
    # Per context request: fetched, cached, prefetched or degraded (see SnapshotFetcher).
    context_sources: list[str] = field(default_factory=list)
    degraded_contexts: int = 0
    shapes: int = 0
    image_bytes: int = 0
    doc_version: int | None = None
    chat_messages: int = 0
    statuses: list[str] = field(default_factory=list)
    # For the quality report: the shapes the session made or changed, and the asker's view.
    drawn: RunShapes = field(default_factory=RunShapes)
    viewport: Box | None = None


class RoomSession:
    """Implements `steward.ports.SessionPort` for one session in one room."""

    def __init__(
        self,
        room_id: str,
        session_id: str,
        prompt: PromptInput,
        *,
        broadcaster: Broadcaster,
        messenger: Messenger,
        snapshots: SnapshotFetcher,
    ) -> None:
        self._room_id = room_id
        self._session_id = session_id
        self.prompt = prompt
        self._broadcaster = broadcaster
        self._messenger = messenger
        self._snapshots = snapshots
        self._cancelled = asyncio.Event()
        # The last progress status sent: the same one again (each request of a run says
        # "waiting_context") tells the room nothing new and is not sent. A final status is
        # sent once by construction: the registry sends one only when the run has not.
        self._last_status: tuple[SessionStatus, str | None] | None = None
        self.ended = False  # a final status went out
        self.figures = SessionFigures()

    @property
    def room_id(self) -> str:
        return self._room_id

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def canvas(self) -> CanvasView:
        return self._broadcaster.mirror

    async def request_context(
        self, *, bounds: Box | None = None, want_screenshot: bool = True
    ) -> CanvasSnapshot:
        self.figures.context_requests += 1
        ctx = await self._snapshots.fetch(
            bounds=bounds or self.prompt.bounds,
            want_screenshot=want_screenshot,
            asker=self.prompt.asker,
            source=self.prompt.source,
        )
        if self.prompt.selection:  # named in the prompt itself: it wins over the view's
            ctx.selection = list(self.prompt.selection)
        self.figures.context_sources.append(ctx.source)
        if self.figures.viewport is None and not ctx.degraded:
            self.figures.viewport = ctx.viewport  # the first request's view is the asker's
        self.figures.shapes = len(ctx.shapes)
        self.figures.image_bytes += len(ctx.screenshot or b"")
        self.figures.doc_version = ctx.doc_version
        if ctx.degraded:
            self.figures.degraded_contexts += 1
        return ctx

    async def request_picture(self, *, bounds: Box, max_size: int) -> Picture | None:
        picture = await self._snapshots.picture(bounds, max_size)
        self.figures.image_bytes += len(picture.data) if picture else 0
        return picture

    async def send_actions(
        self, actions: list[WireAction], *, partial: bool = False, wait: bool = True
    ) -> int:
        if not partial:
            for a in actions:
                self.figures.drawn.note(a.name, a.params)
        seq = await self._broadcaster.send(self._session_id, actions, partial=partial, wait=wait)
        if not partial:  # the panel shows a run's thoughts from the conversation
            for a in actions:
                if a.name in THOUGHT_VERBS:
                    text = a.params.get("text")
                    await self._messenger.thought(
                        self._session_id,
                        a.name,
                        text if isinstance(text, str) else "",
                        fairy=self.prompt.fairy,
                    )
        return seq

    async def flush_actions(self) -> None:
        await self._broadcaster.flush(self._session_id)

    def quality(self, task_bounds: list[Box] | None = None) -> QualityReport:
        """The session's quality report, read off the room's canvas as it is now."""
        mirror = self._broadcaster.mirror
        drawn = self.figures.drawn
        return quality_report(
            mirror.shapes,
            touched=drawn.touched,
            created=drawn.created,
            viewport=self.figures.viewport,
            task_bounds=task_bounds,
            partial=mirror.in_flight(self._session_id),
        )

    async def send_chat(
        self,
        text: str,
        *,
        role: str = "assistant",
        partial: bool = False,
        message_id: str | None = None,
    ) -> None:
        self.figures.chat_messages += 1
        await self._messenger.chat(
            self._session_id,
            text,
            role=role,
            partial=partial,
            fairy=self.prompt.fairy,
            message_id=message_id,
        )

    async def announce_prompt(self) -> None:
        """Tells the room what this run was asked and by whom (the requester is the sender's
        participant identity, or the API client's name). Runs the steward starts itself
        (a fairy waking) have no prompt to show."""
        p = self.prompt
        if p.source == "system" or not p.message:
            return
        await self._messenger.prompt(
            self._session_id, p.message, asker=p.requester, source=p.source, fairy=p.fairy
        )

    async def send_status(self, status: SessionStatus, detail: str | None = None) -> None:
        final = status in FINAL_STATUSES
        if not final and (status, detail) == self._last_status:
            return
        self._last_status = (status, detail)
        self.ended = self.ended or final
        self.figures.statuses.append(status)
        last_seq = None
        if final:
            last_seq = await self._broadcaster.last_seq(self._session_id)
        await self._messenger.status(
            self._session_id, status, detail, fairy=self.prompt.fairy, last_seq=last_seq
        )

    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()
