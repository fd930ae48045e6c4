"""`FairyRuntime`: the room-level fairy agent behind the `AgentRunner` port.

A prompt goes to one fairy (the room's orchestrator unless `PromptInput.fairy` names one).
Each fairy (its state: `room_fairies.FairyState`) has a queue of requests and, while it has
work, one worker task that runs its turns in order. A turn asks the room for context,
builds the prompt from the parts its mode lists, streams the model, and handles each
action: canvas and talk actions go through the agent-core registry (sanitize, resolve)
and, for a fairy working a task, the bounds guard, then out through the fairy's session;
fairy actions change the board and produce effects (interrupt, wait, notify, remember).

Drones run in parallel, each in its own session (`fairy_sessions`). A turn's request is built
by `fairy_request`; every request, history item, project, task, wait and mode is written to
Postgres as it happens (`room_records`); `resume()` after a restart reverts what the dead
process left half-streamed, then re-runs the interrupted requests and the queue (`resume`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from steward.actions.base import RunState, Scheduled
from steward.actions.registry import ACTIONS, Outcome, select
from steward.canvas.bounds import Rect
from steward.canvas.coords import CoordinateSpace
from steward.fairies import acting, fairy_request, fairy_sessions, resume
from steward.fairies.budget import RoomBudget
from steward.fairies.fairy_sessions import SessionFactory
from steward.fairies.interrupts import Interrupt, decide
from steward.fairies.look import Gaze
from steward.fairies.memory import PromptOrigin, action_item, prompt_item
from steward.fairies.modes import ModeDefinition, ModeName, Role, mode, model_role
from steward.fairies.projects import ProjectBoard, task_completed_key
from steward.fairies.role_models import ModelFactory, default_models
from steward.fairies.room_fairies import Request, RoomFairies
from steward.fairies.room_records import RoomRecords
from steward.fairies.roster import Publish, Roster
from steward.fairies.run import AgentRun
from steward.fairies.task_bounds import BoundsGuard
from steward.fairies.turn import (
    TurnDriver,
    TurnEnd,
    TurnHooks,
    run_requests,
    shielded_revert,
)
from steward.fairies.waits import mode_transition_key
from steward.model.base import Usage
from steward.obs.logging import get_logger
from steward.ports import PromptInput, SessionPort
from steward.store.fairies import FairyStore

log = get_logger(__name__)

# Feedback turns in a row a fairy gets for refused actions or mistakes.
MAX_FEEDBACK = 3

# The default crew of a room with no fairies yet: one orchestrator and two drones.
DEFAULT_CREW: tuple[tuple[str, Role], ...] = (
    ("fairy-1", "orchestrator"),
    ("fairy-2", "drone"),
    ("fairy-3", "drone"),
)


class FairyRuntime:
    """Implements `AgentRunner` for rooms with fairies."""

    def __init__(
        self,
        *,
        store: FairyStore | None = None,
        sessions: SessionFactory | None = None,
        models: ModelFactory = default_models,
        publish: Callable[[str], Publish] | None = None,
        crew: tuple[tuple[str, Role], ...] = DEFAULT_CREW,
        max_followups: int = 3,
        budget: RoomBudget | None = None,
    ) -> None:
        self.store = store
        self.records = RoomRecords(store)
        # Checked before, and charged after, every model call of every fairy.
        self.budget = budget
        # Follow-up requests one turn may run (review, add-detail, setMyView, data, todo).
        self.max_followups = max_followups
        self._driver = TurnDriver()
        self.sessions = sessions
        self.models = models
        self.publish = publish
        self.crew = crew
        self.rooms: dict[str, RoomFairies] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._resumed: set[str] = set()

    # -- AgentRunner ---------------------------------------------------------------------
    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        room = await self.room(session.room_id)
        fairy_id = prompt.fairy if prompt.fairy in room.roster.fairies else room.lead()
        assert fairy_id is not None
        if prompt.bounds is not None:
            room.viewport = Rect(prompt.bounds.x, prompt.bounds.y, prompt.bounds.w, prompt.bounds.h)
        state = room.fairy(fairy_id)
        state.lent = session
        state.model = prompt.model
        state.asker = prompt.requester
        await self.records.save_fairy(room, fairy_id)
        try:
            await self.submit(room, fairy_id, prompt.message, "user")
            await self.wait_settled(room)
            return "done"
        except asyncio.CancelledError:
            if self._user_cancel(room, fairy_id) is not None:
                log.info("fairy_cancel_refused", room=room.room_id, fairy=fairy_id)
            raise
        finally:
            if state.lent is session:
                state.lent = None
                state.session = None

    async def close(self) -> None:
        """Stop every fairy's work without finishing its requests: a later `resume()` (this
        room on another worker, or after a restart) picks them up."""
        tasks = [t for room in self.rooms.values() for t in room.working()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- rooms ---------------------------------------------------------------------------
    async def room(self, room_id: str) -> RoomFairies:
        lock = self._locks.setdefault(room_id, asyncio.Lock())
        async with lock:
            if room_id not in self.rooms:
                self.rooms[room_id] = await self._load(room_id)
            return self.rooms[room_id]

    async def _load(self, room_id: str) -> RoomFairies:
        publish = self.publish(room_id) if self.publish else None
        room = RoomFairies(room_id, Roster(publish=publish), ProjectBoard(room_id))
        room.settled.set()
        await self.records.load(room)
        if not room.roster.fairies:
            for fid, role in self.crew:
                room.roster.add(fid, role=role)
                await self.records.save_fairy(room, fid)
        return room

    async def resume(self, room_id: str) -> int:
        """After a restart: revert half-streamed actions, re-run open requests, restart work
        nobody would act on. Returns how many requests were queued."""
        room = await self.room(room_id)
        await room.roster.announce()
        if self.store is None or room_id in self._resumed:
            return 0  # this process already runs (or ran) the room's open requests
        self._resumed.add(room_id)
        rows = await self.store.open_requests(room_id)
        for row in rows:
            req = Request(row["text"], row["origin"], row["request_id"])
            if row["state"] == "running":
                req.resume_session = row["session_id"]
            room.fairy(row["fairy_id"]).queue.append(req)
        restarted = await resume.restart_orphans(self, room)
        for fid in list(room.fairies):
            self._ensure_worker(room, fid)
        log.info("fairies_resumed", room=room_id, requests=len(rows), restarted=restarted)
        return len(rows) + restarted

    async def wait_settled(self, room: RoomFairies) -> None:
        """Until the room's fairies are idle: nothing queued, no worker running."""
        while True:
            await room.settled.wait()
            await asyncio.sleep(0)
            if room.settled.is_set() and not room.working():
                return

    # -- requests and workers ------------------------------------------------------------
    async def submit(self, room: RoomFairies, fairy_id: str, text: str, origin: str) -> None:
        req = Request(text, origin)
        await self.records.enqueue(room, fairy_id, req)
        if origin == "user":
            room.fairy(fairy_id).continuations = 0
            room.fairy(fairy_id).feedback_streak = 0
        room.fairy(fairy_id).queue.append(req)
        self._ensure_worker(room, fairy_id)

    def _ensure_worker(self, room: RoomFairies, fairy_id: str) -> None:
        state = room.fairy(fairy_id)
        if state.worker is not None or not state.queue:
            return
        room.settled.clear()
        state.worker = asyncio.create_task(
            self._worker(room, fairy_id), name=f"fairy:{room.room_id}:{fairy_id}"
        )

    async def _worker(self, room: RoomFairies, fairy_id: str) -> None:
        state = room.fairy(fairy_id)
        try:
            queue = state.queue
            while queue:
                req = queue.popleft()
                turn = asyncio.create_task(self._turn(room, fairy_id, req))
                state.turn = turn
                try:
                    await turn
                except asyncio.CancelledError:
                    me = asyncio.current_task()
                    if me is not None and me.cancelling():
                        raise
                    await self._finish_request(req, "canceled")
                except Exception:
                    log.exception("fairy_turn_failed", room=room.room_id, fairy=fairy_id)
                    await self._finish_request(req, "done")
                finally:
                    state.turn = None
        finally:
            state.worker = None
            await fairy_sessions.release(room, fairy_id, self.sessions)
            if not room.working():
                room.settled.set()

    async def _finish_request(self, req: Request, state: str) -> None:
        await self.records.set_request(req, state)

    # -- modes ---------------------------------------------------------------------------
    async def set_mode(self, room: RoomFairies, fairy_id: str, new: ModeName) -> None:
        fairy = room.roster.get(fairy_id)
        if fairy.mode == new:
            return
        mode(fairy.mode).on_exit(room.facts(fairy_id))
        starts_task = mode(new).memory == "task" and mode(fairy.mode).memory != "task"
        if starts_task and fairy.role != "solo":
            room.fairy(fairy_id).todo.clear()  # a new task: the last task's todo list is done
        task = room.board.working_task_of(fairy_id)
        bounds = task.bounds if task is not None and new.startswith("working") else None
        room.roster.update(fairy_id, mode=new, task_bounds=bounds)
        if bounds is not None:
            room.roster.fly_to(fairy_id, bounds)
        mode(new).on_enter(room.facts(fairy_id))
        await self.records.save_fairy(room, fairy_id)
        await room.roster.announce()
        await self.notify(room, mode_transition_key(fairy_id, new))

    async def cancel(self, room_id: str, fairy_id: str) -> str | None:
        """A user's cancel of one fairy (e.g. `steward.cancel` on a drone's session).
        Returns why it was refused, or None when the fairy was stopped."""
        room = await self.room(room_id)
        if fairy_id not in room.roster.fairies:
            return f"no fairy {fairy_id!r} in this room"
        refused = self._user_cancel(room, fairy_id)
        if refused is None:
            await room.background.wait()
        return refused

    def cancel_session(self, room_id: str, session_id: str) -> bool:
        """`steward.cancel` for a session the fairies opened (a drone's): stops that fairy
        as a user cancel would. False when no fairy works in that session or it refuses."""
        room = self.rooms.get(room_id)
        fairy_id = fairy_sessions.own_session_fairy(room, session_id)
        return (
            room is not None and fairy_id is not None and self._user_cancel(room, fairy_id) is None
        )

    def session_owner(self, room_id: str, session_id: str) -> str | None:
        """Who a session the fairies opened works for (the participant who started the
        project, kept across a restart), or None when unknown (no such session, or work begun
        before owners were saved)."""
        room = self.rooms.get(room_id)
        fairy_id = fairy_sessions.own_session_fairy(room, session_id)
        return None if room is None or fairy_id is None else room.fairy(fairy_id).asker

    def _user_cancel(self, room: RoomFairies, fairy_id: str) -> str | None:
        fairy = room.roster.get(fairy_id)
        d = decide(fairy.mode, room.facts(fairy_id), Interrupt(source="user"))
        if not d.cancel:
            return d.refused or "this fairy cannot be cancelled now"
        state = room.fairy(fairy_id)
        turn = state.turn
        if turn is not None:
            state.user_cancelled = True

            def cancelled(_: object) -> None:
                state.user_cancelled = False

            turn.add_done_callback(cancelled)
            turn.cancel()
        for req in state.queue:
            self._spawn(room, self._finish_request(req, "canceled"))
        state.queue.clear()
        self._spawn(room, self._after_user_cancel(room, fairy_id, d.switch_to))
        return None

    def _spawn(self, room: RoomFairies, coro: Coroutine[Any, Any, None]) -> None:
        room.background.spawn(coro)

    async def _after_user_cancel(
        self, room: RoomFairies, fairy_id: str, switch_to: ModeName | None
    ) -> None:
        """The stopped fairy's task goes back to todo and whoever awaited it is told, so the
        project can re-plan instead of waiting forever for a task nobody works on."""
        task = room.board.release(fairy_id)
        await self.records.save_board(room)
        if switch_to is not None:
            await self.set_mode(room, fairy_id, switch_to)
        if task is None:
            return
        key = task_completed_key(task.id)
        waiters = [c.agent_id for c in room.waits.conditions if c.key == key]
        room.waits.notify(key)
        await self.records.remove_waits(room, key)
        for waiter in waiters:
            await self.submit(
                room,
                waiter,
                f'Task "{task.id}" ({task.title}) was stopped by a user before it was done and'
                f" is back to todo ({fairy_id} is free). Direct a fairy to start it again, delete"
                " it, or end the project.",
                "system",
            )
        log.info("fairy_task_released", room=room.room_id, fairy=fairy_id, task=task.id)

    async def interrupt(self, room: RoomFairies, fairy_id: str, interrupt: Interrupt) -> str | None:
        """Cancel, switch, schedule — for the system and other fairies. Returns a refusal."""
        fairy = room.roster.get(fairy_id)
        d = decide(fairy.mode, room.facts(fairy_id, interrupt.source), interrupt)
        if d.cancel:
            turn = room.fairy(fairy_id).turn
            if turn is not None and turn is not asyncio.current_task():
                turn.cancel()
        if d.switch_to is not None:
            await self.set_mode(room, fairy_id, d.switch_to)
        if d.schedule is not None:
            await self.submit(room, fairy_id, d.schedule, interrupt.source)
        return d.refused

    async def abort(self, room_id: str, project_id: str) -> None:
        """System abort (disband): allowed even mid-project."""
        room = await self.room(room_id)
        project, _ = room.board.abort_project(project_id)
        await self.records.save_board(room)
        for fairy_id in (project.orchestrator, *project.members):
            room.waits.clear(fairy_id)
            await self.records.clear_waits(room, fairy_id)
            await self.interrupt(room, fairy_id, Interrupt("system", mode="idling"))

    # -- one turn ------------------------------------------------------------------------
    async def _turn(self, room: RoomFairies, fairy_id: str, req: Request) -> None:
        fairy = room.roster.get(fairy_id)
        stale = req.origin == "wake" and room.board.active_project_of(fairy_id) is None
        if stale or (fairy.mode in ("idling", "sleeping") and req.origin != "user"):
            # A wake for an ended project, or feedback/nudges that outlived their work.
            await self._finish_request(req, "done")
            return
        start = mode(fairy.mode).on_prompt_start(room.facts(fairy_id))
        if start.mode is not None:
            await self.set_mode(room, fairy_id, start.mode)
        current = mode(room.roster.get(fairy_id).mode)
        if req.resume_session is None:
            await self.records.remember(
                room, fairy_id, [prompt_item(req.text, current.memory, _origin(req.origin))]
            )
        if not current.generates:
            await self._finish_request(req, "done")
            return
        session = await fairy_sessions.session_of(room, fairy_id, self.sessions)
        await self.records.set_request(req, "running", session.session_id)
        if req.resume_session is not None:
            await resume.revert_in_flight(self, room, fairy_id, session, req.resume_session)
        state = room.fairy(fairy_id)
        state.self_interrupted = False
        await self._stream_turn(room, fairy_id, req, session)
        await self._finish_request(req, "done")
        if state.self_interrupted:
            state.self_interrupted = False
        else:
            await self._after_turn(room, fairy_id)

    async def _after_turn(self, room: RoomFairies, fairy_id: str) -> None:
        current = mode(room.roster.get(fairy_id).mode)
        end = current.on_prompt_end(room.facts(fairy_id))
        if end.mode is not None:
            await self.set_mode(room, fairy_id, end.mode)
        if end.schedule is not None:
            room.fairy(fairy_id).continuations += 1
            await self.records.save_fairy(room, fairy_id)
            await self.submit(room, fairy_id, end.schedule, "self")

    def _hooks(self, room: RoomFairies, fairy_id: str, guard: BoundsGuard | None) -> TurnHooks:
        def current() -> ModeDefinition:
            return mode(room.roster.get(fairy_id).mode)

        def refusal(name: str) -> str:
            return current().refusal(name, ACTIONS[name].kind)

        async def effect(out: Outcome) -> bool:
            return await acting.carry_out(self, room, fairy_id, out)

        async def applied(out: Outcome) -> None:
            if out.spec is not None and out.spec.effect is None:
                room.count(fairy_id, 1)
                item = action_item(out.name, out.data, current().memory)
                await self.records.remember(room, fairy_id, [item])

        return TurnHooks(
            actions=lambda: select(current().actions),
            refusal=refusal,
            effect=effect,
            applied=applied,
            guard=guard,
        )

    async def _stream_turn(
        self, room: RoomFairies, fairy_id: str, req: Request, session: SessionPort
    ) -> bool:
        """Returns True when an action ended the turn early."""
        role = model_role(room.roster.get(fairy_id).mode)
        provider = self.models(room.fairy(fairy_id).model, role)
        task = room.board.working_task_of(fairy_id)
        guard = BoundsGuard(task.bounds) if task is not None and task.bounds else None
        ctx = RunState(shapes=session.canvas.shapes, todo=room.fairy(fairy_id).todo)
        ctx.task_bounds = task.bounds if task is not None else None
        run = AgentRun(session, ctx, provider.name)
        hooks = self._hooks(room, fairy_id, guard)
        gaze = Gaze(fairy_request.look_of(room, fairy_id, req, session))

        async def request(_: int, followup: Scheduled | None) -> TurnEnd:
            look = gaze.next(followup)
            if followup is not None and followup.kind == "view" and followup.bounds is not None:
                room.fairy(fairy_id).view = followup.bounds
            await session.send_status("waiting_context")
            context = await fairy_request.context(room, fairy_id, session, look.area)
            if ctx.coords.fresh and room.origin is not None:
                ctx.coords = CoordinateSpace(*room.origin)
            model_request = fairy_request.prompt(room, fairy_id, req, run, context, followup, look)
            turn = run.new_turn(room.next_request(session.session_id), hooks)
            refusal = await self.budget.refusal(room.room_id) if self.budget else None
            if refusal is not None:
                await session.send_chat(refusal, role="system")
                return "ended"
            usage = Usage()
            try:
                end = await self._driver.drive(turn, provider, model_request, usage)
            finally:
                run.ops_sent += turn.ops_sent
                if self.budget is not None:
                    await self.budget.record(
                        session_id=session.session_id,
                        room_id=room.room_id,
                        model=provider.name,
                        usage=usage,
                    )
                room.feedback.keep(
                    f"{session.session_id}:{fairy_id}", run.fresh_notes(), turn.drawn
                )
            await self._turn_feedback(room, fairy_id, turn.refusals)
            return end

        try:
            end = await run_requests(
                request,
                ctx,
                max_followups=self.max_followups,
                made_progress=lambda: run.ops_sent > 0,
            )
        except asyncio.CancelledError:
            if room.fairy(fairy_id).user_cancelled:
                # A user stopped this fairy: its half-streamed actions end as no-ops (their
                # partial changes are undone). A dying process leaves them for resume().
                await shielded_revert(self._driver, run.turn, "canceled")
            raise
        # No "done" status per turn: it is terminal for browsers, and a session carries many
        # turns. The dispatcher (prompt sessions) or close_session (fairy sessions) sends it.
        return end == "ended"

    async def _turn_feedback(self, room: RoomFairies, fairy_id: str, refusals: list[str]) -> None:
        state = room.fairy(fairy_id)
        mistaken, state.mistaken = state.mistaken, False
        if refusals:
            await self.feed_back(room, fairy_id, "Feedback: " + " ".join(refusals[:10]))
        elif not mistaken:
            state.feedback_streak = 0  # a clean turn: the model got it

    async def feed_back(self, room: RoomFairies, fairy_id: str, text: str) -> None:
        """Feedback is another model turn: a model that keeps repeating its mistake gets
        MAX_FEEDBACK of them in a row, then none (its mode's own nudges are capped too)."""
        state = room.fairy(fairy_id)
        state.feedback_streak += 1
        streak = state.feedback_streak
        if streak > MAX_FEEDBACK:
            log.warning("fairy_feedback_capped", room=room.room_id, fairy=fairy_id, streak=streak)
            return
        await self.submit(room, fairy_id, text, "system")

    async def notify(self, room: RoomFairies, key: str) -> None:
        """Wake whoever waits on `key`."""
        wakes = room.waits.notify(key)
        if not wakes:
            return
        await self.records.remove_waits(room, key)
        for w in wakes:
            # Generating: the wake queues behind the current turn; else it starts one now.
            await self.submit(room, w.agent_id, w.message, "wake")

    # -- reporting -----------------------------------------------------------------------
    def project_summary(self, room_id: str) -> dict[str, Any] | None:
        """The `project` key of `steward demo --headless --json` (latest project)."""
        room = self.rooms.get(room_id)
        return None if room is None else room.project_summary()


def _origin(origin: str) -> PromptOrigin:
    return origin if origin in ("user", "system", "self", "fairy") else "system"  # type: ignore[return-value]
