"""Running one queued request of a fairy with its follow-ups: what a fairy's worker does
with each request it takes from the fairy's queue (`FairyRuntime`, through the scheduler
port and the fairies' dependencies: this module never imports the runtime).

A request starts its mode's prompt (mode hooks, history), then runs model requests while
its actions schedule more (review, add-detail, setMyView, data, todo: `turn.run_requests`):
each asks the fairy's session for the context of where it looks, builds the request
(`fairy_request`), streams the model through the turn core and keeps the run's notes and
lints for its next request. Refused actions and mistakes queue a feedback request; a mode
that ends a prompt unfinished queues a continuation; both through the fairy's queue.

What differs between kinds of request (budget, coordinates, numbering, feedback) is read
off the request's kind (`kinds.py`). A one-shot prompt's request (`Request.job`, the prompt
waiting for its outcome) is run the same way by its one-shotting fairy, inside the prompt's
guards: the watchdog, the model's failure, the statuses its session ends with, its usage
charged to the room's budget, and the `agent_run_end` log line.
"""

from __future__ import annotations

import asyncio

from steward.actions.base import RunState, Scheduled
from steward.actions.registry import ACTIONS, Outcome, select
from steward.canvas.coords import CoordinateSpace
from steward.fairies import acting, fairy_request, fairy_sessions, resume
from steward.fairies.deps import FairyDeps
from steward.fairies.look import Gaze
from steward.fairies.memory import (
    PromptOrigin,
    action_item,
    canvas_changes,
    prompt_item,
    run_end_item,
)
from steward.fairies.modes import ModeDefinition, mode, model_role
from steward.fairies.one_shot import OneShotRecorder
from steward.fairies.one_shot_job import OneShotJob
from steward.fairies.room_fairies import Request, RoomFairies
from steward.fairies.scheduler import Scheduler
from steward.model.base import ModelError, ModelProvider, Usage
from steward.obs.logging import get_logger
from steward.ports import SessionPort
from steward.turns.bounds_guard import BoundsGuard
from steward.turns.loop import LoopDecision, run_requests
from steward.turns.run import Run
from steward.turns.turn import TurnDriver, TurnEnd, TurnHooks, shielded_withdraw
from steward.watchdog import Watchdog

log = get_logger(__name__)

# How a run that ended without its answer ended, as its history line says it.
TIMED_OUT = "timed out (it stalled or took too long)"
FAILED = "failed: no answer came from the model"
STOPPED = "was stopped before it finished"


class RequestRunner:
    """Runs the requests of a runtime's fairies, one queued request at a time per fairy."""

    def __init__(self, deps: FairyDeps, scheduler: Scheduler) -> None:
        self.deps = deps
        self.scheduler = scheduler
        self.driver = TurnDriver()

    async def run_request(self, room: RoomFairies, fairy_id: str, req: Request) -> None:
        """Run one queued request and the follow-ups its actions schedule."""
        if req.job is not None:
            try:
                outcome = await self._answer_prompt(room, fairy_id, req, req.job)
            except BaseException as err:
                req.job.settle(err)
                raise
            req.job.settle(outcome)
            return
        deps, scheduler = self.deps, self.scheduler
        fairy = room.roster.get(fairy_id)
        stale = req.origin == "wake" and room.board.active_project_of(fairy_id) is None
        if stale or (fairy.mode in ("idling", "sleeping") and req.origin != "user"):
            # A wake for an ended project, or feedback/nudges that outlived their work.
            await deps.records.set_request(req, "done")
            return
        start = mode(fairy.mode).on_prompt_start(room.facts(fairy_id))
        if start.mode is not None:
            await scheduler.set_mode(room, fairy_id, start.mode)
        current = mode(room.roster.get(fairy_id).mode)
        if req.resume_session is None:
            # A person's prompt keeps who wrote it: the crew works for them from now on.
            asker = room.fairy(fairy_id).asker
            item = prompt_item(req.text, current.memory, _origin(req.origin), asker)
            await deps.records.remember(room, fairy_id, [item])
        if not current.generates:
            await deps.records.set_request(req, "done")
            return
        session = await fairy_sessions.session_of(room, fairy_id, deps.sessions)
        await deps.records.set_request(req, "running", session.session_id)
        if req.resume_session is not None:
            await resume.withdraw_in_flight(deps, room, fairy_id, session, req.resume_session)
        state = room.fairy(fairy_id)
        state.self_interrupted = False
        began = len(state.history)
        try:
            await self._crew_requests(room, fairy_id, req, session)
        except asyncio.CancelledError:
            if state.user_cancelled:
                await self._ended(room, fairy_id, req, STOPPED, began)
            raise
        except Exception:
            await self._ended(room, fairy_id, req, FAILED, began)
            raise
        await deps.records.set_request(req, "done")
        if state.self_interrupted:
            state.self_interrupted = False
        else:
            await self._after_request(room, fairy_id)

    async def _ended(
        self, room: RoomFairies, fairy_id: str, req: Request, how: str, began: int
    ) -> None:
        """Keep how a crew request ended without its answer, for the fairy's later requests
        and the room's (logged, never raised: the request's own error is what matters)."""
        state = room.fairy(fairy_id)
        asker = state.asker if req.origin == "user" else None
        changes = canvas_changes(state.history[began:])
        item = run_end_item(asker, how, changes, mode(room.roster.get(fairy_id).mode).memory)
        try:
            await self.deps.records.remember(room, fairy_id, [item])
        except Exception:
            log.exception("run_end_write_failed", room=room.room_id, fairy=fairy_id)

    async def _after_request(self, room: RoomFairies, fairy_id: str) -> None:
        current = mode(room.roster.get(fairy_id).mode)
        end = current.on_prompt_end(room.facts(fairy_id))
        if end.mode is not None:
            await self.scheduler.set_mode(room, fairy_id, end.mode)
        if end.schedule is not None:
            room.fairy(fairy_id).continuations += 1
            await self.deps.records.save_fairy(room, fairy_id)
            await self.scheduler.submit(room, fairy_id, end.schedule, "self")

    def _hooks(self, room: RoomFairies, fairy_id: str, guard: BoundsGuard | None) -> TurnHooks:
        def current() -> ModeDefinition:
            return mode(room.roster.get(fairy_id).mode)

        def refusal(name: str) -> str:
            return current().refusal(name, ACTIONS[name].kind)

        async def effect(out: Outcome) -> bool:
            return await acting.carry_out(self.deps.records, self.scheduler, room, fairy_id, out)

        async def applied(out: Outcome) -> None:
            if out.spec is not None and out.spec.effect is None:
                room.count(fairy_id, 1)
                item = action_item(out.name, out.data, current().memory)
                await self.deps.records.remember(room, fairy_id, [item])

        return TurnHooks(
            actions=lambda: select(current().actions),
            refusal=refusal,
            effect=effect,
            applied=applied,
            guard=guard,
        )

    async def _crew_requests(
        self, room: RoomFairies, fairy_id: str, req: Request, session: SessionPort
    ) -> None:
        role = model_role(room.roster.get(fairy_id).mode)
        provider = self.deps.models(room.fairy(fairy_id).model, role)
        task = room.board.working_task_of(fairy_id)
        ctx = RunState(
            shapes=session.canvas.shapes,
            room_claims=session.canvas.claims,
            todo=room.fairy(fairy_id).todo,
        )
        area = task.bounds if task is not None else None
        guard = BoundsGuard(area, lambda: ctx.coords) if area is not None else None
        ctx.task_bounds = task.bounds if task is not None else None
        run = Run(session, ctx, provider.name)
        try:
            await self._requests(
                room, fairy_id, req, run, provider, self._hooks(room, fairy_id, guard)
            )
        except asyncio.CancelledError:
            if room.fairy(fairy_id).user_cancelled:
                # A user stopped this fairy: its half-streamed actions end as no-ops (their
                # partial changes are undone). A dying process leaves them for resume().
                await shielded_withdraw(self.driver, run.turn, "canceled")
            raise
        # No "done" status per request: it is terminal for browsers, and a session carries
        # many. The room's sessions send it once, when the run ends (`RoomSessions`).

    async def _requests(
        self,
        room: RoomFairies,
        fairy_id: str,
        req: Request,
        run: Run,
        provider: ModelProvider,
        hooks: TurnHooks,
        recorder: OneShotRecorder | None = None,
    ) -> TurnEnd:
        """The request's model requests, while its actions schedule follow-ups."""
        session, ctx, kind = run.session, run.ctx, room.kind_of(fairy_id)
        gaze = Gaze(fairy_request.look_of(room, fairy_id, req, session))
        # Charged at every model request, or once at the run's end (`_answer_prompt`).
        budget = self.deps.budget if kind.charged == "per-request" else None

        async def request(request_no: int, followup: Scheduled | None) -> TurnEnd:
            look = gaze.next(followup)
            if kind.view_lasts and followup is not None and followup.kind == "view":
                room.fairy(fairy_id).view = followup.bounds or room.fairy(fairy_id).view
            await session.send_status("waiting_context")
            context = await fairy_request.context(room, fairy_id, req, session, look.area)
            run.progress()
            if kind.frame == "first-view" and request_no == 0 and ctx.coords.fresh:
                ctx.coords = CoordinateSpace.at(context.viewport.x, context.viewport.y)
            elif kind.frame == "room-origin" and ctx.coords.fresh and room.origin is not None:
                ctx.coords = CoordinateSpace(*room.origin)
            model_request = fairy_request.prompt(room, fairy_id, req, run, context, followup, look)
            run.request_no = (
                request_no if kind.numbering == "run" else room.next_request(session.session_id)
            )
            turn = run.new_turn(run.request_no, hooks)
            # The task its shapes are credited to: the one it works as the turn begins (a
            # turn may end it with mark-my-task-done).
            working = room.board.working_task_of(fairy_id)
            refusal = await budget.refusal(room.room_id) if budget is not None else None
            if refusal is not None:
                await session.send_chat(refusal, role="system")
                return "ended"
            usage = run.usage if kind.charged == "per-run" else Usage()
            try:
                end = await self.driver.drive(turn, provider, model_request, usage)
            finally:
                run.ops_sent += turn.ops_sent
                if budget is not None:
                    await budget.record(
                        session_id=session.session_id,
                        room_id=room.room_id,
                        model=provider.name,
                        usage=usage,
                    )
                room.feedback.keep(
                    f"{session.session_id}:{fairy_id}", run.fresh_notes(), turn.drawn
                )
                if working is not None:
                    room.credit(working.id, turn.drawn.created)
                if recorder is not None:
                    await recorder.flush()
            if kind.feedback == "queued":
                await self._request_feedback(room, fairy_id, turn.refusals)
            return end

        async def scheduled(decision: LoopDecision) -> None:
            await session.send_status("scheduled", decision.reason)

        return await run_requests(
            request,
            ctx,
            max_followups=self.deps.max_followups,
            made_progress=lambda: run.ops_sent > 0,
            on_followup=scheduled if kind.announces_followups else None,
        )

    async def _request_feedback(
        self, room: RoomFairies, fairy_id: str, refusals: list[str]
    ) -> None:
        state = room.fairy(fairy_id)
        mistaken, state.mistaken = state.mistaken, False
        if refusals:
            await self.scheduler.feed_back(room, fairy_id, "Feedback: " + " ".join(refusals[:10]))
        elif not mistaken:
            state.feedback_streak = 0  # a clean request: the model got it

    # -- a one-shot prompt ---------------------------------------------------------------
    async def _answer_prompt(
        self, room: RoomFairies, fairy_id: str, req: Request, job: OneShotJob
    ) -> str:
        """Answer a one-shot prompt in its session, lent to the fairy for the run; returns
        the run's outcome ("done", "canceled", "error: …")."""
        session, settings = job.session, job.settings
        state = room.fairy(fairy_id)
        state.lent = state.session = session
        recorder = OneShotRecorder(self.deps.records, room, state, job.mode.memory)
        run = Run(
            session,
            RunState(
                shapes=session.canvas.shapes, room_claims=session.canvas.claims, todo=state.todo
            ),
            job.provider.name,
        )
        enabled = select(room.kind_of(fairy_id).enabled(job.mode.actions))
        said, applied = recorder.hooks(session)
        hooks = TurnHooks(actions=lambda: enabled, said=said, applied=applied, mark=job.mark)
        recorder.request(req.text, session)  # history: who asked, which run
        dog = Watchdog(settings.steward_watchdog_s, settings.steward_session_max_s)
        try:
            async with dog.guard():
                run.progress = dog.progress
                end = await self._requests(room, fairy_id, req, run, job.provider, hooks, recorder)
            outcome = "canceled" if end == "canceled" else "done"
            if end == "canceled":
                recorder.ended(STOPPED, session)
        except TimeoutError:
            recorder.ended(TIMED_OUT, session)
            await self._revert_inflight(run, "watchdog")
            await session.send_status("error", "watchdog: the run stalled or took too long")
            outcome = "error: watchdog"
        except asyncio.CancelledError:
            recorder.ended(STOPPED, session)
            await shielded_withdraw(self.driver, run.turn, "canceled")
            raise
        except ModelError as err:
            recorder.ended(FAILED, session)
            await self._revert_inflight(run, "the model failed")
            await session.send_chat(f"The model failed: {err}", role="system")
            await session.send_status("error", str(err)[:200])
            outcome = f"error: {err}"
        finally:
            if state.lent is session:
                state.lent = state.session = None
            await recorder.flush()
            if job.budget is not None:
                await job.budget.record(
                    session_id=session.session_id,
                    room_id=session.room_id,
                    model=job.provider.name,
                    usage=run.usage,
                )
        if outcome == "done":
            await session.send_status("done")
        elif outcome == "canceled":
            await session.send_status("canceled")
        log.info(
            "agent_run_end",
            room=session.room_id,
            session=session.session_id,
            outcome=outcome,
            requests=run.request_no,
            ops=run.ops_sent,
            notes=run.ctx.notes[:10],
        )
        return outcome

    async def _revert_inflight(self, run: Run, why: str) -> None:
        if run.turn is not None:
            await self.driver.withdraw_in_flight(run.turn, why)
            await self.driver.finish_chats(run.turn)


def _origin(origin: str) -> PromptOrigin:
    return origin if origin in ("user", "system", "self", "fairy") else "system"  # type: ignore[return-value]
