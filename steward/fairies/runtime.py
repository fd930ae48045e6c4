"""`FairyRuntime`: the scheduler of the rooms' fairies behind the `AgentRunner` port: their
queues and workers, their modes, cancels, interrupts and wakes. It implements the scheduler
port (`scheduler.py`) the request runner, the actions' effects and resume call back on, and
hands them its dependencies (`deps.FairyDeps`); none of them imports it.

A prompt for the crew goes to one fairy (the room's orchestrator unless `PromptInput.fairy`
names one); a one-shot prompt goes to its asker's one-shotting fairy (`one_shot`) with its
session lent. Each fairy (its state: `room_fairies.FairyState`) has a queue of requests and,
while it has work, one worker task that runs them in order (`request_runner`: each request
with its follow-ups; feedback, wakes and continuations are queued requests too). Fairy
actions change the board and ask for reactions (interrupt, wait, notify, remember).

Drones run in parallel, each in its own session (`fairy_sessions`). Every crew request,
history item, project, task, wait and mode is written to Postgres as it happens
(`room_records`); `resume()` after a restart reverts what the dead process left
half-streamed, then re-runs the interrupted requests and the queue (`resume`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from steward.fairies import directing, fairy_sessions, resume
from steward.fairies.crew import DEFAULT_CREW, RoomCrew
from steward.fairies.deps import FairyDeps
from steward.fairies.fairy_sessions import SessionFactory
from steward.fairies.interrupts import Interrupt, decide
from steward.fairies.modes import ModeName, Role, mode
from steward.fairies.one_shot import one_shot_fairy
from steward.fairies.one_shot_job import OneShotJob
from steward.fairies.project_steering import ProjectSteering, PublishProject
from steward.fairies.projects import ProjectBoard, task_completed_key
from steward.fairies.request_runner import RequestRunner
from steward.fairies.role_models import ModelFactory, default_models
from steward.fairies.room_fairies import Request, RoomFairies, is_one_shot
from steward.fairies.room_records import RoomRecords
from steward.fairies.roster import Publish, Roster
from steward.fairies.waits import mode_transition_key
from steward.obs.logging import get_logger
from steward.ports import PromptInput, SessionPort
from steward.store.crew import CrewStore
from steward.store.fairies import FairyStore
from steward.store.project_runs import ProjectRuns
from steward.turns.model_budget import RoomBudget

log = get_logger(__name__)

__all__ = ["DEFAULT_CREW", "MAX_FEEDBACK", "FairyRuntime"]

# Feedback requests in a row a fairy gets for refused actions or mistakes.
MAX_FEEDBACK = 3

# How long a cancelled one-shot prompt waits for its request to stop (revert its partials).
_STOP_S = 10.0


class FairyRuntime:
    """Implements `AgentRunner` for rooms with fairies, and the scheduler port."""

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
        crew_store: CrewStore | None = None,
        project_runs: ProjectRuns | None = None,
        publish_project: Callable[[str], PublishProject] | None = None,
    ) -> None:
        self.deps = FairyDeps(
            records=RoomRecords(store),
            models=models,
            store=store,
            sessions=sessions,
            budget=budget,
            max_followups=max_followups,
        )
        self._runner = RequestRunner(self.deps, self)
        self._publish = publish
        # Projects as people see and steer them, and the crew they chose (the room's desks).
        records = self.deps.records
        self.steering = ProjectSteering(self, records, project_runs, publish_project)
        self.room_crew = RoomCrew(self, records, crew_store, self.steering, default=crew)
        self.deps.records.on_board_saved = self.steering.board_saved
        self.deps.records.on_waits_saved = self.steering.waits_saved
        self.crew = crew
        self.rooms: dict[str, RoomFairies] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._resumed: set[str] = set()

    # -- AgentRunner ---------------------------------------------------------------------
    async def run(self, session: SessionPort, prompt: PromptInput) -> str:
        room = await self.room(session.room_id)
        picked = directing.picked_once(prompt.fairies)
        if picked:
            refused = directing.refusal(room, picked)
            if refused is not None:
                log.info("fairies_pick_refused", room=room.room_id, picked=list(picked))
                await session.send_chat(refused, role="system")
                return f"error: {refused}"
            fairy_id = await directing.assign(room, self.deps.records, picked)
        else:
            fairy_id = prompt.fairy if prompt.fairy in room.roster.fairies else room.lead()
            room.fairy(fairy_id).picked = None  # its project takes every free drone
        if prompt.bounds is not None:
            room.viewport = prompt.bounds
        state = room.fairy(fairy_id)
        state.lent = session
        state.model = prompt.model
        state.asker = prompt.requester
        state.channel = prompt.channel
        await self.deps.records.save_fairy(room, fairy_id)
        try:
            await self.submit(room, fairy_id, prompt.message, "user")
            if picked:
                await self.wait_idle(room, picked)
            else:
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

    async def one_shot(self, job: OneShotJob) -> str:
        """A one-shot prompt: a request queued to its asker's one-shotting fairy with the
        prompt's session lent to it, run by that fairy's worker. Returns the run's outcome."""
        room = await self.room(job.session.room_id)
        fairy_id = one_shot_fairy(room, job.prompt.requester).fairy_id
        state = room.fairy(fairy_id)
        req = Request(job.prompt.message, "user", job=job)
        state.queue.append(req)
        self._ensure_worker(room, fairy_id)
        try:
            return await job.outcome
        except asyncio.CancelledError:
            # The prompt was cancelled: its request leaves the queue, or stops running
            # (its partials reverted) before the caller hears it stopped.
            if req in state.queue:
                state.queue.remove(req)
            elif state.turn is not None and state.current is req:
                state.turn.cancel()
                await asyncio.shield(asyncio.wait({state.turn}, timeout=_STOP_S))
            raise

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
        publish = self._publish(room_id) if self._publish else None
        room = RoomFairies(room_id, Roster(publish=publish), ProjectBoard(room_id))
        room.settled.set()
        await self.deps.records.load(room)
        await self.room_crew.loaded(room)
        return room

    async def resume(self, room_id: str) -> int:
        """After a restart: revert half-streamed actions, re-run open requests, restart work
        nobody would act on. Returns how many requests were queued."""
        room = await self.room(room_id)
        await room.roster.announce()
        store = self.deps.store
        if store is None or room_id in self._resumed:
            return 0  # this process already runs (or ran) the room's open requests
        self._resumed.add(room_id)
        rows = await store.open_requests(room_id)
        for row in rows:
            req = Request(row["text"], row["origin"], row["request_id"])
            if row["state"] == "running":
                req.resume_session = row["session_id"]
            room.fairy(row["fairy_id"]).queue.append(req)
        restarted = await resume.restart_orphans(self.deps.records, self, room)
        for fid in list(room.fairies):
            self._ensure_worker(room, fid)
        log.info("fairies_resumed", room=room_id, requests=len(rows), restarted=restarted)
        return len(rows) + restarted

    async def wait_settled(self, room: RoomFairies) -> None:
        """Until the room's fairies are idle: nothing queued, no worker running."""
        while True:
            await room.settled.wait()
            await asyncio.sleep(0)
            if room.settled.is_set() and not room.crew_working():
                return

    async def wait_idle(self, room: RoomFairies, fairy_ids: tuple[str, ...]) -> None:
        """Until these fairies are idle (nothing queued, no worker running), whatever the
        room's other fairies do."""

        def working() -> bool:
            states = [room.fairy(fid) for fid in fairy_ids]
            return any(s.worker is not None or s.queue for s in states)

        while True:
            ended = room.worker_ended
            if not working():
                await asyncio.sleep(0)
                if not working():
                    return
                continue
            await ended.wait()

    # -- requests and workers ------------------------------------------------------------
    async def submit(self, room: RoomFairies, fairy_id: str, text: str, origin: str) -> None:
        req = Request(text, origin)
        await self.deps.records.enqueue(room, fairy_id, req)
        if origin == "user":
            room.fairy(fairy_id).continuations = 0
            room.fairy(fairy_id).feedback_streak = 0
        room.fairy(fairy_id).queue.append(req)
        self._ensure_worker(room, fairy_id)

    def _ensure_worker(self, room: RoomFairies, fairy_id: str) -> None:
        state = room.fairy(fairy_id)
        if state.worker is not None or not state.queue:
            return
        if not is_one_shot(fairy_id):
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
                running = asyncio.create_task(
                    self._runner.run_request(room, fairy_id, req),
                    name=f"fairy-request:{room.room_id}:{fairy_id}",
                )
                state.turn, state.current = running, req
                try:
                    await running
                except asyncio.CancelledError:
                    me = asyncio.current_task()
                    if me is not None and me.cancelling():
                        raise
                    await self.deps.records.set_request(req, "canceled")
                except Exception:
                    log.exception("fairy_turn_failed", room=room.room_id, fairy=fairy_id)
                    await self.deps.records.set_request(req, "done")
                finally:
                    state.turn, state.current = None, None
                    if req.job is not None:  # stopped before it could answer: say so
                        req.job.settle(asyncio.CancelledError())
        finally:
            for req in [r for r in state.queue if r.job is not None]:
                state.queue.remove(req)  # a one-shot prompt's session ends with this process
                if req.job is not None:
                    req.job.settle(asyncio.CancelledError())
            state.worker = None
            room.worker_ended.set()
            room.worker_ended = asyncio.Event()
            await fairy_sessions.release(room, fairy_id, self.deps.sessions)
            if not room.crew_working():
                room.settled.set()

    # -- modes ---------------------------------------------------------------------------
    async def set_mode(self, room: RoomFairies, fairy_id: str, new: ModeName) -> None:
        fairy = room.roster.get(fairy_id)
        if fairy.mode == new:
            return
        mode(fairy.mode).on_exit(room.facts(fairy_id))
        starts_task = mode(new).memory == "task" and mode(fairy.mode).memory != "task"
        if starts_task and not room.kind_of(fairy_id).keeps_todo:
            room.fairy(fairy_id).todo.clear()  # a new task: the last task's todo list is done
        task = room.board.working_task_of(fairy_id)
        bounds = task.bounds if task is not None and new.startswith("working") else None
        room.roster.update(fairy_id, mode=new, task_bounds=bounds)
        if bounds is not None:
            room.roster.fly_to(fairy_id, bounds)
        mode(new).on_enter(room.facts(fairy_id))
        if new == "idling":
            directing.back_home(room, fairy_id, self._home(fairy_id))
        await self.deps.records.save_fairy(room, fairy_id)
        await room.roster.announce()
        await self.notify(room, mode_transition_key(fairy_id, new))

    def _home(self, fairy_id: str) -> Role | None:
        """The fairy's home role: the crew's (None: not of the crew this runtime knows)."""
        return dict(self.crew).get(fairy_id)

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

    # -- what the room's sessions ask of a fairy's own run (`steward.room.runs.sessions`) ----
    def asker_of(self, room_id: str, fairy_id: str) -> str | None:
        """Whom the fairy works for (the participant who started its project, kept across a
        restart), or None when unknown."""
        room = self.rooms.get(room_id)
        state = None if room is None else room.fairies.get(fairy_id)
        return None if state is None else state.asker

    def names_of(self, room_id: str) -> dict[str, str]:
        """The room's fairies by name (lower case), for picks by name; empty before the room
        is loaded."""
        room = self.rooms.get(room_id)
        fairies = room.roster.fairies.values() if room is not None else ()
        return {f.name.lower(): f.id for f in fairies}

    def mode_of(self, room_id: str, fairy_id: str) -> str | None:
        room = self.rooms.get(room_id)
        fairy = None if room is None else room.roster.fairies.get(fairy_id)
        return None if fairy is None else fairy.mode

    def stop(self, room_id: str, fairy_id: str) -> bool:
        """`steward.cancel` of a fairy's own run: stops that fairy as a user cancel would.
        False when there is no such fairy or it refuses."""
        room = self.rooms.get(room_id)
        if room is None or fairy_id not in room.roster.fairies:
            return False
        return self._user_cancel(room, fairy_id) is None

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
            self._spawn(room, self.deps.records.set_request(req, "canceled"))
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
        await self.deps.records.save_board(room)
        if switch_to is not None:
            await self.set_mode(room, fairy_id, switch_to)
        if room.fairy(fairy_id).picked is not None and not room.board.active_project_of(fairy_id):
            # A picked fairy a user stopped outside a project is free for the next pick (a
            # stopped solo would otherwise wait in `soloing`, in its solo role).
            await self.set_mode(room, fairy_id, "idling")
        if task is None:
            return
        key = task_completed_key(task.id)
        waiters = [c.fairy_id for c in room.waits.conditions if c.key == key]
        room.waits.notify(key)
        await self.deps.records.save_waits(room)
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
        await self.deps.records.save_board(room)
        fairies = (project.orchestrator, *project.members)
        for fairy_id in fairies:
            room.waits.clear(fairy_id)
        await self.deps.records.save_waits(room)
        for fairy_id in fairies:
            await self.interrupt(room, fairy_id, Interrupt("system", mode="idling"))

    # -- requests -----------------------------------------------------------------------
    async def feed_back(self, room: RoomFairies, fairy_id: str, text: str) -> None:
        """Feedback is another queued request: a model that keeps repeating its mistake gets
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
        await self.deps.records.save_waits(room)
        for w in wakes:
            # Generating: the wake queues behind the current turn; else it starts one now.
            await self.submit(room, w.fairy_id, w.message, "wake")

    # -- reporting -----------------------------------------------------------------------
    def project_summary(self, room_id: str) -> dict[str, Any] | None:
        """The `project` key of `steward demo --headless --json` (latest project)."""
        room = self.rooms.get(room_id)
        return None if room is None else room.project_summary()
