"""Runs one `AgentRunner` task per accepted prompt, tracks and cancels sessions, and ends
each session with exactly one structured log line."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from steward.canvas.quality import QualityReport
from steward.model.base import estimate_tokens
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.ports import AgentRunner, PromptInput
from steward.protocol.messages import SessionStatus, WireAction
from steward.room.broadcaster import Broadcaster
from steward.room.messenger import Messenger
from steward.room.session import RoomSession
from steward.room.snapshot_fetcher import SnapshotFetcher
from steward.store.outbox import Outbox

log = get_logger(__name__)


@dataclass
class SessionResult:
    session_id: str
    outcome: str
    summary: dict[str, object]


# The outcome (and status detail) of a session whose steward died while it ran.
INTERRUPTED = "error: interrupted (the steward restarted)"
MAX_INTERRUPTED_KEPT = 100


def new_session_id() -> str:
    """A prompted session's id (an HTTP run queued for another steward gets one up front)."""
    return f"s-{uuid.uuid4().hex[:16]}"


def record_quality(report: QualityReport) -> dict[str, int]:
    """The report's counts, for the session's end line, added to /metrics as they go out."""
    counts = report.counts()
    for kind, n in counts.items():
        if n:
            metrics.QUALITY_PROBLEMS.labels(kind=kind).inc(n)
    return counts


class PromptSessions:
    def __init__(
        self,
        room_id: str,
        runner: Callable[[], AgentRunner],
        *,
        broadcaster: Broadcaster,
        messenger: Messenger,
        snapshots: SnapshotFetcher,
        outbox: Outbox,
        model: str,
        max_s: float = 600.0,
        usage_of: Callable[[str], Awaitable[dict[str, object]]] | None = None,
    ) -> None:
        self.room_id = room_id
        self._runner = runner
        self._broadcaster = broadcaster
        self._messenger = messenger
        self._snapshots = snapshots
        self._outbox = outbox
        self._model = model
        # The hard cap on a session; the agent's own watchdog ends a stalled one sooner.
        self._max_s = max_s
        self._usage_of = usage_of
        self.sessions: dict[str, RoomSession] = {}
        self._tasks: dict[str, asyncio.Task[SessionResult]] = {}
        self.results: dict[str, SessionResult] = {}
        # Sessions whose row is being written: running already for a drain or a waiter.
        self._starting: dict[str, asyncio.Future[None]] = {}
        # Sessions a dead steward left running, ended by this one (see `end_interrupted`).
        self.interrupted: list[str] = []

    @property
    def active(self) -> int:
        return sum(1 for sid in self._tasks if sid not in self.results)

    async def start(self, prompt: PromptInput, session_id: str | None = None) -> str:
        minted = session_id is None
        session_id = session_id or new_session_id()
        session = RoomSession(
            self.room_id,
            session_id,
            prompt,
            broadcaster=self._broadcaster,
            messenger=self._messenger,
            snapshots=self._snapshots,
        )
        started = self._starting[session_id] = asyncio.get_running_loop().create_future()
        try:
            await self._outbox.start_session(
                session_id=session_id,
                room_id=self.room_id,
                source=prompt.source,
                requester=prompt.requester,
                model=prompt.model or self._model,
                fairy_id=prompt.fairy,
            )
            if minted:
                self._broadcaster.new_session(session_id)
            self.sessions[session_id] = session
            task = asyncio.create_task(self._run(session), name=f"session:{session_id}")
            self._tasks[session_id] = task
        finally:
            del self._starting[session_id]
            started.set_result(None)
        metrics.ACTIVE_SESSIONS.inc()
        log.info(
            "session_started",
            room=self.room_id,
            session_id=session_id,
            source=prompt.source,
            requester=prompt.requester,
            prompt=prompt.message,
        )
        return session_id

    def running(self) -> list[str]:
        return [*self._starting, *(sid for sid, task in self._tasks.items() if not task.done())]

    def cancel(self, session_id: str) -> bool:
        session, task = self.sessions.get(session_id), self._tasks.get(session_id)
        if session is None or task is None or task.done() or session_id in self.results:
            return False
        session.cancel()
        task.cancel()
        return True

    async def wait(self, session_id: str, timeout: float | None = None) -> SessionResult:
        if session_id in self.results:
            return self.results[session_id]
        async with asyncio.timeout(timeout):
            if session_id in self._starting:
                await asyncio.shield(self._starting[session_id])
            task = self._tasks[session_id]  # KeyError: unknown, or its start failed
            return await asyncio.shield(task)

    async def settled(self, session_id: str) -> None:
        """Returns once the session has ended or has failed to start (what a drain awaits)."""
        with contextlib.suppress(Exception):
            await self.wait(session_id)

    async def close(self) -> None:
        for sid in list(self._tasks):
            self.cancel(sid)
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _run(self, session: RoomSession) -> SessionResult:
        sid = session.session_id
        outcome = "error: unknown"
        try:
            await session.announce_prompt()
            await session.send_status("waiting_context")
            async with asyncio.timeout(self._max_s):
                outcome = await self._runner().run(session, session.prompt)
        except asyncio.CancelledError:
            outcome = "canceled"
        except TimeoutError:
            outcome = "error: watchdog"
        except Exception as err:
            log.exception("session_failed", room=self.room_id, session_id=sid)
            outcome = f"error: {type(err).__name__}"
        finally:
            metrics.ACTIVE_SESSIONS.dec()
        if outcome != "done":  # canceled or failed: no half-drawn preview stays behind
            await self._revert_in_flight(sid, "canceled" if outcome == "canceled" else "failed")
        status: SessionStatus = (
            "done" if outcome == "done" else "canceled" if outcome == "canceled" else "error"
        )
        with contextlib.suppress(Exception):
            await session.send_status(status, None if status != "error" else outcome)
        summary = self._summary(session, outcome)
        summary["quality"] = record_quality(session.quality())
        summary.update(await self._usage(sid))
        with contextlib.suppress(Exception):
            await self._outbox.end_session(sid, status, outcome)
        metrics.SESSIONS.labels(outcome=status).inc()
        log.info("session_ended", **summary)
        result = SessionResult(sid, outcome, summary)
        self.results[sid] = result
        self._tasks.pop(sid, None)
        return result

    async def end_interrupted(self, session_id: str) -> None:
        """A session a killed steward left running (its task died with it): withdraw its
        previews as a cancel does and give browsers its final status, once."""
        if session_id in self._tasks or session_id in self.results:
            return  # ours: it ends by itself
        reverted = await self._revert_in_flight(session_id, "interrupted")
        with contextlib.suppress(Exception):
            await self._interrupted_status(session_id)
        await self._outbox.end_session(session_id, "error", INTERRUPTED)
        self.interrupted.append(session_id)
        del self.interrupted[:-MAX_INTERRUPTED_KEPT]
        metrics.SESSIONS.labels(outcome="error").inc()
        log.warning(
            "session_interrupted", room=self.room_id, session_id=session_id, reverted=reverted
        )

    async def resend_interrupted(self, participant: str) -> None:
        """Their status again, to one browser that asked for a full resync."""
        for session_id in self.interrupted:
            await self._interrupted_status(session_id, to=[participant])

    async def _interrupted_status(self, session_id: str, to: list[str] | None = None) -> None:
        last = await self._broadcaster.last_seq(session_id)
        await self._messenger.status(session_id, "error", INTERRUPTED, to=to, last_seq=last)

    async def _revert_in_flight(self, session_id: str, why: str = "canceled") -> int:
        """Cancel reverts in-flight partials: a final no-op version under the same id."""
        ids = self._broadcaster.mirror.in_flight(session_id)
        if ids:
            final = [WireAction(id=i, name="think", params={"text": why}) for i in ids]
            with contextlib.suppress(Exception):
                await self._broadcaster.send(session_id, final)
        return len(ids)

    async def _usage(self, session_id: str) -> dict[str, object]:
        """Models, tokens and cost the agent recorded for the session (none: no usage)."""
        if self._usage_of is None:
            return {}
        try:
            return await asyncio.wait_for(self._usage_of(session_id), 2.0)
        except Exception as err:  # the line goes out without them, saying why
            return {"usage_error": repr(err)[:200]}

    def _summary(self, session: RoomSession, outcome: str) -> dict[str, object]:
        stream = self._broadcaster.stats(session.session_id)
        fig = session.figures
        started = fig.started_at

        def since(t: float | None) -> float | None:
            return None if t is None else round(t - started, 4)

        first_env, first_applied = since(stream.first_envelope_at), since(stream.first_applied_at)
        if first_env is not None:
            metrics.FIRST_ENVELOPE_SECONDS.observe(first_env)
        if first_applied is not None:
            metrics.FIRST_APPLIED_SECONDS.observe(first_applied)
        return {
            "room": self.room_id,
            "session_id": session.session_id,
            "source": session.prompt.source,
            "outcome": outcome,
            "prompt_tokens_est": estimate_tokens(session.prompt.message),
            "shapes": fig.shapes,
            "image_bytes": fig.image_bytes,
            "doc_version": fig.doc_version,
            "degraded_contexts": fig.degraded_contexts,
            "context_sources": list(fig.context_sources),
            "time_to_first_envelope_s": first_env,
            "time_to_first_applied_s": first_applied,
            "envelopes": stream.envelopes,
            "actions": stream.actions,
            "retransmits": stream.retransmits,
            "previews_coalesced": stream.previews_coalesced,
            "resyncs": stream.resyncs,
            "acks_per_client": dict(stream.acks),
            "follow_ups": max(0, fig.context_requests - 1),
            "elapsed_s": round(time.monotonic() - started, 4),
        }
