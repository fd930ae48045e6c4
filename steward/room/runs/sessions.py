"""Every run in a room, prompted, a fairy's own or a revert's, in one registry
(`RoomSessions`): it opens, resumes, cancels and closes them, knows whom each works for,
lists them for the operator, and ends each with one `session_ended` log line and one final
status.

A prompted run is one `AgentRunner` task per accepted prompt, driven here. A fairy's own
run (a drone working a task, a lead waking) is opened and closed by the fairy runtime through
the `SessionFactory` port (`SessionsByRoom`), which routes each call to its room's registry.
A revert's run (the inverse of another run, `steward.room.runs.revert`) is opened and closed by the
`Reverter` around the one envelope it sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from tenacity import AsyncRetrying, stop_after_delay, wait_exponential

from steward.canvas.mirror import withdrawals
from steward.canvas.quality import QualityReport
from steward.model.base import estimate_tokens
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.ports import AgentRunner, PromptInput, SessionPort
from steward.protocol.messages import SessionStatus
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.outbound.broadcaster import Broadcaster
from steward.room.outbound.messenger import Messenger
from steward.room.owners import fairy_owner
from steward.room.runs.session import RoomSession
from steward.store.outbox import Outbox

log = get_logger(__name__)

# A prompted run (one prompt, one task driven here), a fairy's own run (opened and closed
# by the fairy runtime through `SessionsByRoom`) or a revert's run (opened and closed by the
# `Reverter`).
SessionKind = Literal["prompt", "fairy", "revert"]
# What a revert's run records as its model and its source (no model runs in it).
REVERT_MODEL = "revert"
REVERT_SOURCE = "revert"


@dataclass
class SessionResult:
    """How a run ended: its session id, outcome and summary."""

    session_id: str
    outcome: str
    summary: dict[str, object]


# The outcome (and status detail) of a session whose steward died while it ran.
INTERRUPTED = "error: interrupted (the steward restarted)"
MAX_INTERRUPTED_KEPT = 100
# How long a run's end is retried while Postgres is away (a restart takes a few seconds).
END_RECORD_S = 30.0


def new_session_id() -> str:
    """Every run's id, prompted or a fairy's (an HTTP run queued for another steward gets one
    up front)."""
    return f"s-{uuid.uuid4().hex[:16]}"


def record_quality(report: QualityReport) -> dict[str, int]:
    """The report's counts, for the session's end line, added to /metrics as they go out."""
    counts = report.counts()
    for kind, n in counts.items():
        if n:
            metrics.QUALITY_PROBLEMS.labels(kind=kind).inc(n)
    return counts


def final_status(outcome: str) -> SessionStatus:
    return "done" if outcome == "done" else "canceled" if outcome == "canceled" else "error"


class FairyDesk(Protocol):
    """What the registry asks of the fairy runtime about a fairy's own run (implemented by
    `FairyRuntime`; the room never imports the fairies)."""

    def asker_of(self, room_id: str, fairy_id: str) -> str | None:
        """Whom the fairy works for (kept across a restart), or None when unknown."""
        ...

    def mode_of(self, room_id: str, fairy_id: str) -> str | None: ...

    def stop(self, room_id: str, fairy_id: str) -> bool:
        """A user's cancel of the fairy: False when it refuses (or is unknown)."""
        ...


class RoomSessions:
    """The room's one registry of runs (prompted, fairies' own and reverts')."""

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
        fairy_model: str | None = None,
        max_s: float = 600.0,
        usage_of: Callable[[str], Awaitable[dict[str, object]]] | None = None,
        fairies: FairyDesk | None = None,
    ) -> None:
        self.room_id = room_id
        self._runner = runner
        self._broadcaster = broadcaster
        self._messenger = messenger
        self._snapshots = snapshots
        self._outbox = outbox
        self._model = model  # a prompted run's, unless its prompt names one
        self._fairy_model = fairy_model or model  # a fairy's own run's
        # The hard cap on a prompted run; the agent's own watchdog ends a stalled one sooner.
        self._max_s = max_s
        self._usage_of = usage_of
        self._fairies = fairies
        # Every session opened here (ended ones too, with their result): prompted or fairy.
        self.sessions: dict[str, RoomSession] = {}
        self.kinds: dict[str, SessionKind] = {}
        self._tasks: dict[str, asyncio.Task[SessionResult]] = {}
        self._begun: set[str] = set()  # prompted runs whose task has begun
        self.results: dict[str, SessionResult] = {}
        # Sessions whose row is being written: running already for a drain or a waiter.
        self._starting: dict[str, asyncio.Future[None]] = {}
        # Sessions a dead steward left running, ended by this one (see `end_interrupted`).
        self.interrupted: list[str] = []

    @property
    def active(self) -> int:
        """Prompted runs going now."""
        return sum(1 for sid in self._tasks if sid not in self.results)

    def is_open(self, session_id: str) -> bool:
        return session_id in self.sessions and session_id not in self.results

    def fairy_of(self, session_id: str) -> str | None:
        """The fairy whose own run `session_id` is (open or ended), else None."""
        session = self.sessions.get(session_id)
        if session is None or self.kinds.get(session_id) != "fairy":
            return None
        return session.prompt.fairy

    def _session(self, session_id: str, prompt: PromptInput) -> RoomSession:
        return RoomSession(
            self.room_id,
            session_id,
            prompt,
            broadcaster=self._broadcaster,
            messenger=self._messenger,
            snapshots=self._snapshots,
        )

    # --- prompted runs -------------------------------------------------------------------
    async def start(self, prompt: PromptInput, session_id: str | None = None) -> str:
        minted = session_id is None
        session_id = session_id or new_session_id()
        session = self._session(session_id, prompt)
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
            self.kinds[session_id] = "prompt"
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
        """Prompted runs going now (a fairy's own runs are listed by `overview`)."""
        return [*self._starting, *(sid for sid, task in self._tasks.items() if not task.done())]

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
            self._stop(sid)
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _run(self, session: RoomSession) -> SessionResult:
        sid = session.session_id
        self._begun.add(sid)
        outcome = "error: unknown"
        try:
            if session.cancelled():  # cancelled before its task began: it ends here
                raise asyncio.CancelledError
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
        return await self._end(session, outcome)

    # --- a fairy's own runs (the `SessionFactory` side) ----------------------------------
    async def open_fairy(self, fairy_id: str, *, resume: str | None = None) -> RoomSession:
        """A new run of the fairy's own; with `resume`, that dead run reopened (its seq
        continued) with what it left in flight withdrawn first."""
        session_id = resume or new_session_id()
        owner = fairy_owner(fairy_id)
        prompt = PromptInput(message="", source="system", requester=owner, fairy=fairy_id)
        session = self._session(session_id, prompt)
        if resume is None:
            await self._outbox.start_session(
                session_id=session_id,
                room_id=self.room_id,
                source="system",
                requester=owner,
                model=self._fairy_model,
                fairy_id=fairy_id,
            )
        self.results.pop(session_id, None)
        self.sessions[session_id] = session
        self.kinds[session_id] = "fairy"
        log.info("fairy_session_opened", room=self.room_id, fairy=fairy_id, session_id=session_id)
        if resume is not None:
            await self.withdraw_in_flight(session_id, "reverted after a restart")
        return session

    async def close_fairy(self, session: SessionPort, outcome: str) -> None:
        """The fairy has no more work in its run: it ends here, once."""
        sid = session.session_id
        own = self.sessions.get(sid)
        if own is None or sid in self.results:
            return
        await self._end(own, outcome, status="done")

    # --- a revert's runs ------------------------------------------------------------------
    async def open_revert(self, reverted_id: str, requester: str) -> RoomSession:
        """The run that takes back run `reverted_id` for participant `requester` (whose it is,
        until it ends). Its row's source says revert; what it sends is its own envelopes."""
        session_id = new_session_id()
        prompt = PromptInput(message=f"Undo {reverted_id}", source="browser", requester=requester)
        session = self._session(session_id, prompt)
        await self._outbox.start_session(
            session_id=session_id,
            room_id=self.room_id,
            source=REVERT_SOURCE,
            requester=requester,
            model=REVERT_MODEL,
        )
        self._broadcaster.new_session(session_id)
        self.sessions[session_id] = session
        self.kinds[session_id] = "revert"
        log.info(
            "revert_session_opened",
            room=self.room_id,
            session_id=session_id,
            reverts=reverted_id,
            requester=requester,
        )
        return session

    async def close_revert(
        self, session: RoomSession, outcome: str, figures: dict[str, object]
    ) -> SessionResult:
        """The revert's run is over: it ends here, once, its `figures` on its end line."""
        sid = session.session_id
        if sid in self.results:
            return self.results[sid]
        return await self._end(session, outcome, figures=figures)

    # --- every run -----------------------------------------------------------------------
    async def _end(
        self,
        session: RoomSession,
        outcome: str,
        *,
        status: SessionStatus | None = None,
        figures: dict[str, object] | None = None,
    ) -> SessionResult:
        """The one end of every run: previews withdrawn unless it finished, its final status
        sent once, its row closed, one `session_ended` line."""
        sid = session.session_id
        kind = self.kinds.get(sid, "prompt")
        if outcome not in ("done", "reverted"):  # canceled or failed: no half-drawn preview
            await self.withdraw_in_flight(sid, "canceled" if outcome == "canceled" else "failed")
        status = status or final_status(outcome)
        if not session.ended:  # the run's final status, unless the runner sent it already
            with contextlib.suppress(Exception):
                await session.send_status(status, None if status != "error" else outcome)
        summary = self._summary(session, outcome, kind)
        summary["quality"] = record_quality(session.quality())
        summary.update(await self._usage(sid))
        summary.update(figures or {})
        await self._record_end(sid, status, outcome)
        if kind == "prompt":  # the sessions metric counts prompted runs, as it always has
            metrics.SESSIONS.labels(outcome=status).inc()
        log.info("session_ended", **summary)
        result = SessionResult(sid, outcome, summary)
        self.results[sid] = result
        self._tasks.pop(sid, None)
        self._begun.discard(sid)
        return result

    async def _record_end(self, sid: str, status: str, outcome: str) -> None:
        """Close the run's row, through a Postgres restart: a row left `running` would be
        taken for a run a dead steward left, and ended `interrupted` at the next start."""
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_delay(END_RECORD_S),
                wait=wait_exponential(multiplier=0.1, max=2.0),
                reraise=True,
            ):
                with attempt:
                    await self._outbox.end_session(sid, status, outcome)
        except Exception as err:  # the run is over either way; its row says otherwise
            log.warning("session_end_not_recorded", session_id=sid, error=str(err)[:200])

    def owner(self, session_id: str) -> str | None:
        """Whom an open run works for: the prompt's requester, or whom its fairy works for;
        None when unknown."""
        session = self.sessions.get(session_id)
        if session is None:
            return None
        fairy = self.fairy_of(session_id)
        if fairy is None:
            return session.prompt.requester
        return None if session_id in self.results else self.fairy_asker(fairy)

    def fairy_asker(self, fairy_id: str) -> str | None:
        """Whom the fairy works for (the participant who started its project), if known."""
        return None if self._fairies is None else self._fairies.asker_of(self.room_id, fairy_id)

    def cancel(self, session_id: str, requester: str) -> bool:
        """`steward.cancel` (and voice "stop", and a revert) of any run, with its log line."""
        owner = self.owner(session_id)  # before the cancel ends the run
        ok = self._stop(session_id)
        log.info(
            "session_cancel",
            room=self.room_id,
            session_id=session_id,
            by=requester,
            owner=owner,
            ok=ok,
        )
        return ok

    def _stop(self, session_id: str) -> bool:
        if not self.is_open(session_id):
            return False
        fairy = self.fairy_of(session_id)
        if fairy is not None:  # its fairy decides, as a user's cancel of it would
            return self._fairies is not None and self._fairies.stop(self.room_id, fairy)
        if self.kinds.get(session_id) == "revert":  # one envelope, sent at once: it is taken
            return False  # back by reverting it, as any run is
        session, task = self.sessions[session_id], self._tasks.get(session_id)
        if task is None or task.done():
            return False
        session.cancel()
        if session_id in self._begun:  # a task cancelled before it began would end unlogged
            task.cancel()
        return True

    def overview(self) -> list[dict[str, Any]]:
        """Every open run, for the operator (`GET /api/rooms`)."""
        views = []
        for sid, session in self.sessions.items():
            if sid in self.results:
                continue
            fairy = self.fairy_of(sid)
            mode = None
            if fairy is not None and self._fairies is not None:
                mode = self._fairies.mode_of(self.room_id, fairy)
            views.append(
                {
                    "session_id": sid,
                    "fairy": session.prompt.fairy,
                    "mode": mode,
                    "requester": session.prompt.requester,
                    "seq": self._broadcaster.stats(sid).last_seq,
                    "unacked": self._broadcaster.unacked_in(sid),
                }
            )
        return views

    async def end_interrupted(self, session_id: str) -> None:
        """A session a killed steward left running (its task died with it): withdraw its
        previews as a cancel does and give browsers its final status, once."""
        if session_id in self._tasks or session_id in self.results:
            return  # ours: it ends by itself
        reverted = await self.withdraw_in_flight(session_id, "interrupted")
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

    async def withdraw_in_flight(self, session_id: str, why: str = "canceled") -> int:
        """The one way a run's in-flight previews are withdrawn (a run that did not finish,
        one a dead steward left, a fairy's run reopened after a restart): a final no-op
        version under each in-flight id, in that run. Returns how many."""
        ids = self._broadcaster.mirror.in_flight(session_id)
        if ids:
            with contextlib.suppress(Exception):
                await self._broadcaster.send(session_id, withdrawals(ids, why))
        return len(ids)

    async def _usage(self, session_id: str) -> dict[str, object]:
        """Models, tokens and cost the agent recorded for the session (none: no usage)."""
        if self._usage_of is None:
            return {}
        try:
            return await asyncio.wait_for(self._usage_of(session_id), 2.0)
        except Exception as err:  # the line goes out without them, saying why
            return {"usage_error": repr(err)[:200]}

    def _summary(self, session: RoomSession, outcome: str, kind: SessionKind) -> dict[str, object]:
        stream = self._broadcaster.stats(session.session_id)
        fig = session.figures
        started = fig.started_at

        def since(t: float | None) -> float | None:
            return None if t is None else round(t - started, 4)

        first_env, first_applied = since(stream.first_envelope_at), since(stream.first_applied_at)
        if first_env is not None and kind == "prompt":
            metrics.FIRST_ENVELOPE_SECONDS.observe(first_env)
        if first_applied is not None and kind == "prompt":
            metrics.FIRST_APPLIED_SECONDS.observe(first_applied)
        return {
            "room": self.room_id,
            "session_id": session.session_id,
            "kind": kind,
            "fairy": session.prompt.fairy,
            "source": REVERT_SOURCE if kind == "revert" else session.prompt.source,
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


class SessionsByRoom:
    """The fairies' `SessionFactory` over every room this process serves: each call goes to
    its room's registry (`registry_of`: room id -> the served room's `RoomSessions`)."""

    def __init__(self, registry_of: Callable[[str], RoomSessions | None]) -> None:
        self._registry_of = registry_of
        # Where each open fairy run lives: it is closed there even once its room has closed.
        self._open: dict[str, RoomSessions] = {}

    async def open_session(
        self, room_id: str, fairy_id: str, *, resume: str | None = None
    ) -> SessionPort:
        registry = self._registry_of(room_id)
        if registry is None:
            raise RuntimeError(f"this steward does not serve room {room_id!r}")
        session = await registry.open_fairy(fairy_id, resume=resume)
        self._open[session.session_id] = registry
        return session

    async def close_session(self, session: SessionPort, outcome: str) -> None:
        registry = self._open.pop(session.session_id, None)
        if registry is not None:
            await registry.close_fairy(session, outcome)
