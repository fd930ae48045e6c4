"""`FairyRuntime`: the room-level fairy agent behind the `AgentRunner` port.

A prompt goes to one fairy (the room's orchestrator unless `PromptInput.fairy` names one).
Each fairy has a queue of requests and, while it has work, one worker task that runs its
turns in order. A turn asks the room for context, builds the prompt from the parts its mode
lists, streams the model, and handles each action: canvas and talk actions go through the
agent-core registry (sanitize, resolve) and — for a fairy working a task — through the
bounds guard, then out through the fairy's own session (own seq); fairy actions change the
board and produce effects (interrupt another fairy, wait, notify, remember).

Drones run in parallel, each in its own session from the `SessionFactory` the room runtime
provides. Every request, history item, todo, project, task, wait and mode is written to
Postgres as it happens; `resume()` after a restart reverts what the dead process left
half-streamed, then re-runs the interrupted requests and the queue.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from steward.actions.base import RunState, Scheduled, TodoItem
from steward.actions.registry import ACTIONS, Outcome, select
from steward.canvas.apply import Shapes
from steward.canvas.bounds import Rect
from steward.canvas.coords import CoordinateSpace
from steward.config import ModelRole, Settings
from steward.fairies.actions.effects import (
    BoardOps,
    Effect,
    Moved,
    Notify,
    Remember,
    Review,
    SwitchFairy,
    WaitFor,
    abort_effects,
    drone_brief,
)
from steward.fairies.budget import RoomBudget
from steward.fairies.interrupts import Interrupt, decide, feedback
from steward.fairies.look import Gaze, Look
from steward.fairies.memory import (
    HistoryItem,
    PromptOrigin,
    action_item,
    feedback_item,
    filter_history,
    history_tokens,
    prompt_item,
)
from steward.fairies.mistakes import FairyMistake
from steward.fairies.modes import (
    WORKING_MODE,
    ModeDefinition,
    ModeFacts,
    ModeName,
    Role,
    kind_of,
    mode,
    model_role,
)
from steward.fairies.notes import NoteCarry
from steward.fairies.persistence import (
    fairy_from,
    fairy_row,
    history_from,
    history_row,
    project_from,
    project_row,
    task_from,
    task_row,
    wait_from,
    wait_row,
)
from steward.fairies.projects import ProjectBoard, task_completed_key
from steward.fairies.prompt_parts import FairyView, brief
from steward.fairies.roster import Publish, Roster
from steward.fairies.scripted_project import ScriptedProjectModel
from steward.fairies.task_bounds import BoundsGuard, shapes_in
from steward.fairies.tasks import Task
from steward.fairies.turn import (
    Turn,
    TurnDriver,
    TurnEnd,
    TurnHooks,
    record_outcome,
    run_requests,
    shielded_revert,
)
from steward.fairies.waits import WaitBoard, mode_transition_key
from steward.model.base import ModelProvider, ModelRequest, Usage
from steward.model.canvas_view import shapes_for_model
from steward.model.registry import get_model
from steward.obs.logging import get_logger
from steward.ports import CanvasSnapshot, PromptInput, SessionPort
from steward.prompt.registry import build_request
from steward.prompt.state import ChatItem, PromptState
from steward.protocol.messages import Box, WireAction
from steward.store.fairies import FairyStore
from steward.tasks import TaskSet

log = get_logger(__name__)

# Feedback turns in a row a fairy gets for refused actions or mistakes.
MAX_FEEDBACK = 3

DEFAULT_VIEW = Rect(0, 0, 1600, 900)
# The default crew of a room with no fairies yet: one orchestrator and two drones.
DEFAULT_CREW: tuple[tuple[str, Role], ...] = (
    ("fairy-1", "orchestrator"),
    ("fairy-2", "drone"),
    ("fairy-3", "drone"),
)


class SessionFactory(Protocol):
    """Provided by the room runtime: a new agent session (own id and seq) for a fairy.

    With `resume`, the session reopens that (dead) session id and continues its seq, so
    final versions sent in it revert the dead process's partials exactly where every
    receiver keeps their undo: per (session, action id)."""

    async def open_session(
        self, room_id: str, fairy_id: str, *, resume: str | None = None
    ) -> SessionPort: ...

    async def close_session(self, session: SessionPort, outcome: str) -> None: ...


# (the run's model override or None, the role of the turn) → provider.
ModelFactory = Callable[[str | None, ModelRole], ModelProvider]


def default_models(name: str | None, role: ModelRole) -> ModelProvider:
    if name in (None, "", "scripted"):
        return ScriptedProjectModel(tokens_per_s=None)
    raise ValueError(f"FairyRuntime has no provider for model {name!r}; pass a ModelFactory")


def models_from_settings(settings: Settings) -> ModelFactory:
    """`None` is the role's configured model (`Settings.model_for_role`); `scripted` is the
    project-aware scripted model (so a scripted room can run whole projects); anything else
    goes through the model registry. Providers are cached per name (the Anthropic client
    keeps its connection pool)."""
    cache: dict[str, ModelProvider] = {}

    def make(name: str | None, role: ModelRole) -> ModelProvider:
        spec = name or settings.model_for_role(role)
        if spec not in cache:
            if spec == "scripted":
                rate = settings.steward_scripted_tokens_per_s
                cache[spec] = ScriptedProjectModel(tokens_per_s=rate or None)
            else:
                cache[spec] = get_model(spec, settings)
        return cache[spec]

    return make


@dataclass
class Request:
    text: str
    origin: str  # user | system | self
    request_id: int | None = None
    resume_session: str | None = None  # a request a dead process left running


@dataclass
class ProjectStats:
    orchestrator_actions: int = 0
    drone_actions: int = 0
    # Summed over the orchestrator's turns: the history it was shown (filtered by its
    # memory level) and what one agent that had done all the work would have been shown.
    history_tokens_orchestrator: int = 0
    history_tokens_unfiltered: int = 0


@dataclass
class _FairyRun:
    """One fairy turn: its requests (follow-ups included) share this."""

    session: SessionPort
    ctx: RunState
    model_name: str
    turn: Turn | None = None
    ops_sent: int = 0
    # What the model is shown as selected: the asker's selection when a user's prompt began
    # the turn (kept for its follow-ups); nothing in turns nobody asked for just now.
    selection: list[str] | None = None


@dataclass
class RoomFairies:
    room_id: str
    roster: Roster
    board: ProjectBoard
    waits: WaitBoard = field(default_factory=WaitBoard)
    history: dict[str, list[HistoryItem]] = field(default_factory=dict)
    continuations: dict[str, int] = field(default_factory=dict)
    queues: dict[str, deque[Request]] = field(default_factory=dict)
    workers: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    turns: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    sessions: dict[str, SessionPort] = field(default_factory=dict)
    lent: dict[str, SessionPort] = field(default_factory=dict)  # sessions from run() callers
    stats: ProjectStats = field(default_factory=ProjectStats)
    # The model a fairy's turns use: the one its user's prompt named, passed on to the
    # fairies it directs (saved with the fairy, so a resumed project keeps it).
    models: dict[str, str | None] = field(default_factory=dict)
    # Whom each fairy works for: the participant whose prompt started its work, passed on
    # to the fairies it directs, so a project's sessions have an owner for cancel rights
    # (saved with the fairy: a restart that resumes the project keeps the owner).
    askers: dict[str, str] = field(default_factory=dict)
    # Fairies that interrupted themselves with new input this turn (start-task, …): the
    # old prompt is over, so its on_prompt_end hook must not also schedule a nudge.
    self_interrupted: set[str] = field(default_factory=set)
    # Feedback turns in a row (refusals, mistakes) per fairy, and who made a mistake this turn.
    feedback_streak: dict[str, int] = field(default_factory=dict)
    mistaken: set[str] = field(default_factory=set)
    user_cancelled: set[str] = field(default_factory=set)  # whose current turn a user stopped
    background: TaskSet = field(default_factory=lambda: TaskSet("fairy_task_failed"))
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    viewport: Rect = DEFAULT_VIEW
    # Each fairy's own view (setMyView moves it) and todo list, and the room's coordinate
    # origin for the model (the first view a fairy got), in memory only.
    views: dict[str, Rect] = field(default_factory=dict)
    todos: dict[str, list[TodoItem]] = field(default_factory=dict)
    origin: tuple[float, float] | None = None
    # Model requests per session, for wire ids `{session}.{request}.{index}`.
    requests: dict[str, int] = field(default_factory=dict)
    # Per fairy: notes on its actions for its next prompt (lints part), in memory only.
    notes: NoteCarry = field(default_factory=NoteCarry)

    def next_request(self, session_id: str) -> int:
        n = self.requests.get(session_id, 0)
        self.requests[session_id] = n + 1
        return n


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
        fairy_id = prompt.fairy if prompt.fairy in room.roster.fairies else self._lead(room)
        assert fairy_id is not None
        if prompt.bounds is not None:
            room.viewport = Rect(prompt.bounds.x, prompt.bounds.y, prompt.bounds.w, prompt.bounds.h)
        room.lent[fairy_id] = session
        room.models[fairy_id] = prompt.model
        room.askers[fairy_id] = prompt.requester
        await self._save_fairy(room, fairy_id)
        try:
            await self.submit(room, fairy_id, prompt.message, "user")
            await self.wait_settled(room)
            return "done"
        except asyncio.CancelledError:
            if self._user_cancel(room, fairy_id) is not None:
                log.info("fairy_cancel_refused", room=room.room_id, fairy=fairy_id)
            raise
        finally:
            if room.lent.get(fairy_id) is session:
                del room.lent[fairy_id]
                room.sessions.pop(fairy_id, None)

    async def close(self) -> None:
        """Stop every fairy's work without finishing its requests: a later `resume()` (this
        room on another worker, or after a restart) picks them up."""
        tasks = [t for room in self.rooms.values() for t in room.workers.values()]
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
        if self.store is not None:
            for row in await self.store.load_fairies(room_id):
                fairy, cont = fairy_from(row)
                room.roster.fairies[fairy.id] = fairy
                room.continuations[fairy.id] = cont
                if row.get("asker"):
                    room.askers[fairy.id] = row["asker"]
                if row.get("model") is not None:
                    room.models[fairy.id] = row["model"]
                room.history[fairy.id] = [
                    history_from(r) for r in await self.store.load_history(room_id, fairy.id)
                ]
            room.board.load(
                [project_from(r) for r in await self.store.load_projects(room_id)],
                [task_from(r) for r in await self.store.load_tasks(room_id)],
            )
            room.waits.load([wait_from(r) for r in await self.store.load_waits(room_id)])
        if not room.roster.fairies:
            for fid, role in self.crew:
                room.roster.add(fid, role=role)
                await self._save_fairy(room, fid)
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
            room.queues.setdefault(row["fairy_id"], deque()).append(req)
        restarted = await self._restart_orphans(room)
        for fid in list(room.queues):
            self._ensure_worker(room, fid)
        log.info("fairies_resumed", room=room_id, requests=len(rows), restarted=restarted)
        return len(rows) + restarted

    async def _restart_orphans(self, room: RoomFairies) -> int:
        """Work the dead process left where nobody acts on it gets someone to act.

        A crash can fall between two writes of one step: a task in progress whose fairy's
        request was never queued, a wait on a task that finished (or never started) whose
        wake was never queued, a lead whose tasks nobody works. Returns the requests queued."""
        queued = {fid for fid, q in room.queues.items() if q}
        before = sum(len(q) for q in room.queues.values())
        for task in list(room.board.tasks.values()):
            fid = task.assigned_to
            if task.status != "in-progress" or fid is None or fid in queued:
                continue
            project = room.board.projects.get(task.project_id or "")
            if project is not None and project.status != "active":
                continue
            if project is not None and fid != project.orchestrator:
                work = drone_brief(task, project.orchestrator, room.origin or (0.0, 0.0))
            else:
                work = f'Work on your task "{task.id}": {task.text}'
            working = WORKING_MODE[room.roster.get(fid).role]
            log.info("fairy_task_restarted", room=room.room_id, fairy=fid, task=task.id)
            await self.interrupt(room, fid, Interrupt("system", mode=working, input=work))
        for cond in list(room.waits.conditions):
            tid = cond.key.removeprefix("task-completed:")
            if tid == cond.key:
                continue  # a mode transition: its fairy is resumed above or idle
            status = t.status if (t := room.board.tasks.get(tid)) is not None else None
            if status == "in-progress":
                continue  # its fairy works it (resumed or restarted above) and will notify
            if status == "done":
                await self._notify(room, cond.key)  # the wake the dead process never queued
                continue
            room.waits.notify(cond.key)
            if self.store is not None:
                await self.store.remove_waits(room.room_id, cond.key)
        for project in list(room.board.projects.values()):
            lead = project.orchestrator
            if project.status != "active" or room.queues.get(lead) or room.waits.waiting_on(lead):
                continue
            await self.submit(
                room,
                lead,
                "Your project was resumed after a restart and nothing is waking you. Tasks: "
                + room.board.task_list(project.id)
                + ". Direct a fairy to start each todo task, await the ones in progress, or end"
                " the project.",
                "system",
            )
        return sum(len(q) for q in room.queues.values()) - before

    def _lead(self, room: RoomFairies) -> str:
        for f in room.roster.fairies.values():
            if f.role in ("orchestrator", "duo-orchestrator"):
                return f.id
        return next(iter(room.roster.fairies))

    async def wait_settled(self, room: RoomFairies) -> None:
        """Until the room's fairies are idle: nothing queued, no worker running."""
        while True:
            await room.settled.wait()
            await asyncio.sleep(0)
            if room.settled.is_set() and not room.workers:
                return

    # -- requests and workers ------------------------------------------------------------
    async def submit(self, room: RoomFairies, fairy_id: str, text: str, origin: str) -> None:
        req = Request(text, origin)
        if self.store is not None:
            req.request_id = await self.store.enqueue(room.room_id, fairy_id, text, origin)
        if origin == "user":
            room.continuations[fairy_id] = 0
            room.feedback_streak.pop(fairy_id, None)
        room.queues.setdefault(fairy_id, deque()).append(req)
        self._ensure_worker(room, fairy_id)

    def _ensure_worker(self, room: RoomFairies, fairy_id: str) -> None:
        if fairy_id in room.workers or not room.queues.get(fairy_id):
            return
        room.settled.clear()
        room.workers[fairy_id] = asyncio.create_task(
            self._worker(room, fairy_id), name=f"fairy:{room.room_id}:{fairy_id}"
        )

    async def _worker(self, room: RoomFairies, fairy_id: str) -> None:
        try:
            queue = room.queues[fairy_id]
            while queue:
                req = queue.popleft()
                turn = asyncio.create_task(self._turn(room, fairy_id, req))
                room.turns[fairy_id] = turn
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
                    room.turns.pop(fairy_id, None)
        finally:
            room.workers.pop(fairy_id, None)
            await self._release_session(room, fairy_id)
            if not room.workers:
                room.settled.set()

    async def _finish_request(self, req: Request, state: str) -> None:
        if self.store is not None and req.request_id is not None:
            await self.store.set_request(req.request_id, state)

    async def _session(self, room: RoomFairies, fairy_id: str) -> SessionPort:
        if fairy_id in room.sessions:
            return room.sessions[fairy_id]
        session = room.lent.get(fairy_id)
        if session is None and self.sessions is not None:
            session = await self.sessions.open_session(room.room_id, fairy_id)
        if session is None:
            session = next(iter(room.lent.values()), None)
        if session is None:
            raise RuntimeError("no session available for fairy " + fairy_id)
        room.sessions[fairy_id] = session
        return session

    async def _release_session(self, room: RoomFairies, fairy_id: str) -> None:
        session = room.sessions.pop(fairy_id, None)
        if session is None or session in room.lent.values() or self.sessions is None:
            return
        try:
            await self.sessions.close_session(session, "done")
        except Exception:
            log.exception("fairy_session_close_failed", room=room.room_id, fairy=fairy_id)

    # -- modes ---------------------------------------------------------------------------
    def _facts(self, room: RoomFairies, fairy_id: str, source: str = "user") -> ModeFacts:
        fairy = room.roster.get(fairy_id)
        task = room.board.working_task_of(fairy_id)
        open_solo = [t for t in room.board.solo_tasks_of(fairy_id) if t.status == "todo"]
        return ModeFacts(
            role=fairy.role,
            project_active=room.board.active_project_of(fairy_id) is not None,
            task_in_progress=task is not None,
            open_solo_tasks=len(open_solo),
            waiting_on=len(room.waits.waiting_on(fairy_id)),
            continuations=room.continuations.get(fairy_id, 0),
            cancel_source=source,  # type: ignore[arg-type]
        )

    async def _set_mode(self, room: RoomFairies, fairy_id: str, new: ModeName) -> None:
        fairy = room.roster.get(fairy_id)
        if fairy.mode == new:
            return
        mode(fairy.mode).on_exit(self._facts(room, fairy_id))
        task = room.board.working_task_of(fairy_id)
        bounds = task.bounds if task is not None and new.startswith("working") else None
        room.roster.update(fairy_id, mode=new, task_bounds=bounds)
        if bounds is not None:
            room.roster.fly_to(fairy_id, bounds)
        mode(new).on_enter(self._facts(room, fairy_id))
        await self._save_fairy(room, fairy_id)
        await room.roster.announce()
        await self._notify(room, mode_transition_key(fairy_id, new))

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
        fairy_id = self._own_session_fairy(room, session_id)
        return (
            room is not None and fairy_id is not None and self._user_cancel(room, fairy_id) is None
        )

    def session_owner(self, room_id: str, session_id: str) -> str | None:
        """Who a session the fairies opened works for (the participant who started the
        project, kept across a restart), or None when unknown (no such session, or work begun
        before owners were saved)."""
        room = self.rooms.get(room_id)
        fairy_id = self._own_session_fairy(room, session_id)
        return None if room is None or fairy_id is None else room.askers.get(fairy_id)

    @staticmethod
    def _own_session_fairy(room: RoomFairies | None, session_id: str) -> str | None:
        """The fairy working in `session_id`, when the fairies opened it (not a user's run)."""
        if room is None:
            return None
        for fairy_id, session in room.sessions.items():
            if session.session_id == session_id and fairy_id not in room.lent:
                return fairy_id
        return None

    def _user_cancel(self, room: RoomFairies, fairy_id: str) -> str | None:
        fairy = room.roster.get(fairy_id)
        d = decide(fairy.mode, self._facts(room, fairy_id), Interrupt(source="user"))
        if not d.cancel:
            return d.refused or "this fairy cannot be cancelled now"
        turn = room.turns.get(fairy_id)
        if turn is not None:
            room.user_cancelled.add(fairy_id)
            turn.add_done_callback(lambda _: room.user_cancelled.discard(fairy_id))
            turn.cancel()
        for req in room.queues.get(fairy_id, deque()):
            self._spawn(room, self._finish_request(req, "canceled"))
        room.queues.get(fairy_id, deque()).clear()
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
        await self._persist_board(room)
        if switch_to is not None:
            await self._set_mode(room, fairy_id, switch_to)
        if task is None:
            return
        key = task_completed_key(task.id)
        waiters = [c.agent_id for c in room.waits.conditions if c.key == key]
        room.waits.notify(key)
        if self.store is not None:
            await self.store.remove_waits(room.room_id, key)
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
        d = decide(fairy.mode, self._facts(room, fairy_id, interrupt.source), interrupt)
        if d.cancel:
            turn = room.turns.get(fairy_id)
            if turn is not None and turn is not asyncio.current_task():
                turn.cancel()
        if d.switch_to is not None:
            await self._set_mode(room, fairy_id, d.switch_to)
        if d.schedule is not None:
            await self.submit(room, fairy_id, d.schedule, interrupt.source)
        return d.refused

    async def abort(self, room_id: str, project_id: str) -> None:
        """System abort (disband): allowed even mid-project."""
        room = await self.room(room_id)
        ctx = BoardOps(room_id, "system", room.board, room.roster)
        abort_effects(ctx, project_id)
        await self._persist_board(room)
        for eff in ctx.effects:
            if isinstance(eff, SwitchFairy):
                room.waits.clear(eff.fairy_id)
                if self.store is not None:
                    await self.store.clear_waits(room_id, eff.fairy_id)
                await self.interrupt(room, eff.fairy_id, Interrupt("system", mode=eff.mode))

    # -- one turn ------------------------------------------------------------------------
    async def _turn(self, room: RoomFairies, fairy_id: str, req: Request) -> None:
        fairy = room.roster.get(fairy_id)
        stale = req.origin == "wake" and room.board.active_project_of(fairy_id) is None
        if stale or (fairy.mode in ("idling", "sleeping") and req.origin != "user"):
            # A wake for an ended project, or feedback/nudges that outlived their work.
            await self._finish_request(req, "done")
            return
        start = mode(fairy.mode).on_prompt_start(self._facts(room, fairy_id))
        if start.mode is not None:
            await self._set_mode(room, fairy_id, start.mode)
        current = mode(room.roster.get(fairy_id).mode)
        if req.resume_session is None:
            await self._remember(
                room, fairy_id, [prompt_item(req.text, current.memory, _origin(req.origin))]
            )
        if not current.generates:
            await self._finish_request(req, "done")
            return
        session = await self._session(room, fairy_id)
        if self.store is not None and req.request_id is not None:
            await self.store.set_request(req.request_id, "running", session.session_id)
        if req.resume_session is not None:
            await self.revert_in_flight(room, fairy_id, session, req.resume_session)
        room.self_interrupted.discard(fairy_id)
        await self._stream_turn(room, fairy_id, req, session)
        await self._finish_request(req, "done")
        if fairy_id in room.self_interrupted:
            room.self_interrupted.discard(fairy_id)
        else:
            await self._after_turn(room, fairy_id)

    async def _after_turn(self, room: RoomFairies, fairy_id: str) -> None:
        current = mode(room.roster.get(fairy_id).mode)
        end = current.on_prompt_end(self._facts(room, fairy_id))
        if end.mode is not None:
            await self._set_mode(room, fairy_id, end.mode)
        if end.schedule is not None:
            room.continuations[fairy_id] = room.continuations.get(fairy_id, 0) + 1
            await self._save_fairy(room, fairy_id)
            await self.submit(room, fairy_id, end.schedule, "self")

    async def revert_in_flight(
        self, room: RoomFairies, fairy_id: str, session: SessionPort, dead_session: str
    ) -> None:
        """Undo what a dead process left half-streamed.

        Exact for every verb: the final version of each in-flight action is a no-op sent in
        the dead session itself (reopened, its seq continued), and every receiver — browsers,
        the room's mirror, a client replaying the outbox later — keeps the undo of a partial
        under (session, action id), so it restores exactly what the partial changed. Without
        a factory that can reopen sessions, creates are deleted by id and other verbs get a
        no-op final in the current session (exact for creates only)."""
        assert self.store is not None
        partials = await self.store.in_flight_partials(dead_session)
        if not partials:
            return
        finals = [
            WireAction(id=a["id"], name="think", params={"text": "reverted after a restart"})
            for a in partials
        ]
        reopened: SessionPort | None = None
        if self.sessions is not None:
            try:
                reopened = await self.sessions.open_session(
                    room.room_id, fairy_id, resume=dead_session
                )
            except Exception:
                log.exception("fairy_session_reopen_failed", room=room.room_id, fairy=fairy_id)
        if reopened is not None:
            await reopened.send_actions(finals)
            await self.sessions.close_session(reopened, "reverted")  # type: ignore[union-attr]
        else:
            reverts: list[WireAction] = []
            for a, final in zip(partials, finals, strict=True):
                params = a.get("params") or {}
                if a.get("name") == "create_shape" and isinstance(params.get("id"), str):
                    reverts.append(
                        WireAction(id=a["id"], name="delete_shape", params={"ids": [params["id"]]})
                    )
                else:
                    reverts.append(final)
            await session.send_actions(reverts)
        log.info("fairy_partials_reverted", room=room.room_id, count=len(finals))

    def _view_of(self, room: RoomFairies, fairy_id: str) -> Rect:
        """Where the fairy looks: its task area while it works one, else its own view
        (moved by setMyView), else the room's."""
        task = room.board.working_task_of(fairy_id)
        if task is not None and task.bounds is not None:
            return task.bounds
        return room.views.get(fairy_id, room.viewport)

    def _look_of(
        self, room: RoomFairies, fairy_id: str, req: Request, session: SessionPort
    ) -> Look:
        """Where a turn starts looking: its task area, else its own view (setMyView), else
        the asker's view when a user's prompt in the asker's own session began the turn,
        else the room's."""
        task = room.board.working_task_of(fairy_id)
        if task is not None and task.bounds is not None:
            return Look(task.bounds, "task")
        own = room.views.get(fairy_id)
        if own is not None:
            return Look(own, "own")
        if req.origin == "user" and session is room.lent.get(fairy_id):
            return Look(None, "asker")
        return Look(room.viewport, "room")

    async def _context(
        self, room: RoomFairies, fairy_id: str, session: SessionPort, area: Rect | None
    ) -> CanvasSnapshot:
        """The context of `area` (None: the asker's view, as the session's browser reports)."""
        sees = "screenshot" in mode(room.roster.get(fairy_id).mode).parts
        box = Box(x=area.x, y=area.y, w=area.w, h=area.h) if area is not None else None
        ctx = await session.request_context(bounds=box, want_screenshot=sees)
        if ctx.viewport.w > 0 and ctx.viewport.h > 0 and not ctx.degraded:
            room.viewport = Rect(ctx.viewport.x, ctx.viewport.y, ctx.viewport.w, ctx.viewport.h)
        if room.origin is None:
            # One origin for the room's fairies, so areas one plans mean the same to all.
            room.origin = (float(round(room.viewport.x)), float(round(room.viewport.y)))
        return ctx

    def _fairy_view(
        self, room: RoomFairies, fairy_id: str, request: str, shapes: Shapes
    ) -> FairyView:
        fairy = room.roster.get(fairy_id)
        project = room.board.active_project_of(fairy_id)
        return FairyView(
            fairy=fairy,
            mode=mode(fairy.mode),
            others=[f for f in room.roster.fairies.values() if f.id != fairy_id],
            project=project,
            project_tasks=room.board.project_tasks(project.id) if project else [],
            task=room.board.working_task_of(fairy_id),
            own_tasks=room.board.solo_tasks_of(fairy_id),
            history=room.history.get(fairy_id, []),
            shapes=shapes,
            viewport=self._view_of(room, fairy_id),
            request=request,
            origin=room.origin or (0.0, 0.0),
        )

    def _hints(self, room: RoomFairies, view: FairyView) -> dict[str, Any]:
        """Facts for the scripted project model, in the model's coordinates."""
        ox, oy = view.origin

        def box(r: Rect) -> dict[str, float]:
            return {"x": r.x - ox, "y": r.y - oy, "w": r.w, "h": r.h}

        def t(task: Task) -> dict[str, Any]:
            return {
                "id": task.id,
                "title": task.title,
                "status": task.status,
                "assigned_to": task.assigned_to,
                "bounds": box(task.bounds) if task.bounds else None,
            }

        area = view.area
        visible = shapes_in(view.shapes, area) if area else list(view.shapes.values())
        free = [
            f.id
            for f in view.others
            if f.role == "drone" and room.board.active_project_of(f.id) is None
        ]
        return {
            "mode": view.fairy.mode,
            "fairy_id": view.fairy.id,
            "message": view.request,
            "viewport": box(view.viewport),
            "project": {"id": view.project.id, "title": view.project.title}
            if view.project
            else None,
            "tasks": [t(x) for x in view.project_tasks],
            "own_tasks": [t(x) for x in view.own_tasks],
            "task": t(view.task) if view.task else None,
            "free_drones": free,
            "existing_ids": [s["id"] for s in visible],
            # What is on the canvas, for scripted plans in free space.
            "canvas": shapes_for_model(view.shapes, CoordinateSpace(ox, oy)),
        }

    def _prompt(
        self,
        room: RoomFairies,
        fairy_id: str,
        req: Request,
        run: _FairyRun,
        context: CanvasSnapshot,
        followup: Scheduled | None,
        look: Look,
    ) -> ModelRequest:
        session = run.session
        view = self._fairy_view(room, fairy_id, req.text, session.canvas.shapes)
        # The area this request shows (image and shape lists alike), named for what it is.
        asker = Rect(context.viewport.x, context.viewport.y, context.viewport.w, context.viewport.h)
        view.viewport = look.area or asker
        if run.selection is None:
            asked = req.origin == "user" and session is room.lent.get(fairy_id)
            run.selection = list(context.selection) if asked else []
        current = view.mode
        if view.fairy.role in ("orchestrator", "duo-orchestrator") and view.project is not None:
            room.stats.history_tokens_orchestrator += history_tokens(
                filter_history(view.history, current.memory)
            )
            crew = (view.project.orchestrator, *view.project.members)
            room.stats.history_tokens_unfiltered += sum(
                history_tokens(room.history.get(f, [])) for f in crew
            )
        remembered = filter_history(view.history, current.memory)
        if remembered and remembered[-1].kind == "prompt" and remembered[-1].text == req.text:
            remembered = remembered[:-1]  # the request itself is the `messages` part
        history = [
            ChatItem("user" if i.kind == "prompt" else "assistant", i.model_text(), current.memory)
            for i in remembered
        ]
        state = PromptState(
            message=req.text,
            model_name=run.model_name,
            shapes=session.canvas.shapes,
            viewport=view.viewport,
            view_kind=look.kind,
            coords=run.ctx.coords,
            enabled_actions=current.actions,
            selection=list(run.selection),
            screenshot=context.screenshot,
            screenshot_type=context.screenshot_type,
            history=history,
            memory_level=current.memory,
            user_changes=list(context.user_changes),
            view_note=context.view_note,
            todo=run.ctx.todo,
            scheduled=list(run.ctx.scheduled),
            followup=followup,
            now_iso=datetime.now(UTC).isoformat(timespec="seconds"),
            mode=current.name,
            fairy=brief(view),
            notes=room.notes.take(fairy_id),
        )
        request = build_request(state, current)
        request.hints["fairy"] = self._hints(room, view)
        return request

    def _hooks(self, room: RoomFairies, fairy_id: str, guard: BoundsGuard | None) -> TurnHooks:
        def current() -> ModeDefinition:
            return mode(room.roster.get(fairy_id).mode)

        def refusal(name: str) -> str:
            return current().refusal(name, kind_of(ACTIONS[name].family))

        async def effect(out: Outcome) -> bool:
            return await self._fairy_action(room, fairy_id, out) == "end"

        async def applied(out: Outcome) -> None:
            if out.spec is not None and out.spec.effect is None:
                self._count(room, fairy_id, 1)
                item = action_item(out.name, out.data, current().memory)
                await self._remember(room, fairy_id, [item])

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
        provider = self.models(room.models.get(fairy_id), role)
        task = room.board.working_task_of(fairy_id)
        guard = BoundsGuard(task.bounds) if task is not None and task.bounds else None
        ctx = RunState(shapes=session.canvas.shapes, todo=room.todos.setdefault(fairy_id, []))
        ctx.task_bounds = task.bounds if task is not None else None
        run = _FairyRun(session, ctx, provider.name)
        hooks = self._hooks(room, fairy_id, guard)
        gaze = Gaze(self._look_of(room, fairy_id, req, session))

        async def request(_: int, followup: Scheduled | None) -> TurnEnd:
            look = gaze.next(followup)
            if followup is not None and followup.kind == "view" and followup.bounds is not None:
                room.views[fairy_id] = followup.bounds
            await session.send_status("waiting_context")
            context = await self._context(room, fairy_id, session, look.area)
            if ctx.coords.fresh and room.origin is not None:
                ctx.coords = CoordinateSpace(*room.origin)
            ctx.shapes = session.canvas.shapes
            ctx.id_map.clear()
            ctx.claimed.clear()
            model_request = self._prompt(room, fairy_id, req, run, context, followup, look)
            run.turn = Turn(session, ctx, room.next_request(session.session_id), hooks)
            refusal = await self.budget.refusal(room.room_id) if self.budget else None
            if refusal is not None:
                await session.send_chat(refusal, role="system")
                return "ended"
            usage = Usage()
            noted = len(ctx.notes)
            try:
                end = await self._driver.drive(run.turn, provider, model_request, usage)
            finally:
                run.ops_sent += run.turn.ops_sent
                if self.budget is not None:
                    await self.budget.record(
                        session_id=session.session_id,
                        room_id=room.room_id,
                        model=provider.name,
                        usage=usage,
                    )
                room.notes.keep(fairy_id, ctx.notes[noted:])
            await self._turn_feedback(room, fairy_id, run.turn.refusals)
            return end

        try:
            end = await run_requests(
                request,
                ctx,
                max_followups=self.max_followups,
                made_progress=lambda: run.ops_sent > 0,
            )
        except asyncio.CancelledError:
            if fairy_id in room.user_cancelled:
                # A user stopped this fairy: its half-streamed actions end as no-ops (their
                # partial changes are undone). A dying process leaves them for resume().
                await shielded_revert(self._driver, run.turn, "canceled")
            raise
        # No "done" status per turn: it is terminal for browsers, and a session carries many
        # turns. The dispatcher (prompt sessions) or close_session (fairy sessions) sends it.
        return end == "ended"

    async def _turn_feedback(self, room: RoomFairies, fairy_id: str, refusals: list[str]) -> None:
        mistaken = fairy_id in room.mistaken
        room.mistaken.discard(fairy_id)
        if refusals:
            await self._feed_back(room, fairy_id, "Feedback: " + " ".join(refusals[:10]))
        elif not mistaken:
            room.feedback_streak.pop(fairy_id, None)  # a clean turn: the model got it

    async def _feed_back(self, room: RoomFairies, fairy_id: str, text: str) -> None:
        """Feedback is another model turn: a model that keeps repeating its mistake gets
        MAX_FEEDBACK of them in a row, then none (its mode's own nudges are capped too)."""
        streak = room.feedback_streak.get(fairy_id, 0) + 1
        room.feedback_streak[fairy_id] = streak
        if streak > MAX_FEEDBACK:
            log.warning("fairy_feedback_capped", room=room.room_id, fairy=fairy_id, streak=streak)
            return
        await self.submit(room, fairy_id, text, "system")

    def _count(self, room: RoomFairies, fairy_id: str, n: int) -> None:
        if room.roster.get(fairy_id).role in ("orchestrator", "duo-orchestrator"):
            room.stats.orchestrator_actions += n
        else:
            room.stats.drone_actions += n

    @staticmethod
    def _session_id(room: RoomFairies, fairy_id: str) -> str:
        session = room.sessions.get(fairy_id)
        return session.session_id if session is not None else ""

    async def _fairy_action(self, room: RoomFairies, fairy_id: str, out: Outcome) -> str | None:
        """Carry out a complete action's effect (its spec's) on the room's fairies."""
        name, data = out.name, out.data
        assert out.spec is not None and out.spec.effect is not None
        current = mode(room.roster.get(fairy_id).mode)
        ctx = BoardOps(room.room_id, fairy_id, room.board, room.roster)
        try:
            out.spec.effect(ctx, data)
        except FairyMistake as mistake:
            log.info("fairy_mistake", room=room.room_id, fairy=fairy_id, action=name)
            record_outcome(room.room_id, self._session_id(room, fairy_id), name, mistake.feedback)
            await self._persist_board(room)
            await self._remember(
                room,
                fairy_id,
                [
                    action_item(name, data, current.memory),
                    feedback_item(mistake.feedback, current.memory),
                ],
            )
            # Feedback through an interrupt: the rest of this turn is dropped.
            fb = feedback(mistake.feedback)
            d = decide(current.name, self._facts(room, fairy_id, "system"), fb)
            room.mistaken.add(fairy_id)
            if d.schedule is not None:
                await self._feed_back(room, fairy_id, d.schedule)
            return "end"
        record_outcome(room.room_id, self._session_id(room, fairy_id), name)
        self._count(room, fairy_id, 1)
        await self._remember(room, fairy_id, [action_item(name, data, current.memory)])
        await self._persist_board(room)
        for eff in ctx.effects:
            await self._apply_effect(room, fairy_id, eff)
        return "end" if ctx.end_turn else None

    async def _apply_effect(self, room: RoomFairies, actor: str, eff: Effect) -> None:
        if isinstance(eff, SwitchFairy):
            if eff.fairy_id == actor:
                await self._set_mode(room, actor, eff.mode)
                if eff.input:
                    room.self_interrupted.add(actor)
                    await self.submit(room, actor, eff.input, "self")
            else:
                room.models[eff.fairy_id] = room.models.get(actor)  # drones use their lead's
                if actor in room.askers:
                    room.askers[eff.fairy_id] = room.askers[actor]
                await self._save_fairy(room, eff.fairy_id)
                await self.interrupt(
                    room, eff.fairy_id, Interrupt("system", mode=eff.mode, input=eff.input)
                )
        elif isinstance(eff, WaitFor):
            added = room.waits.wait(eff.fairy_id, eff.keys)
            if self.store is not None:
                await self.store.add_waits(room.room_id, [wait_row(w) for w in added])
        elif isinstance(eff, Notify):
            await self._notify(room, eff.key)
        elif isinstance(eff, Remember):
            await self._remember(room, eff.fairy_id, eff.items)
        elif isinstance(eff, Review):
            room.self_interrupted.add(eff.fairy_id)  # the next prompt is set: no nudge
            if not room.queues.get(eff.fairy_id):  # a queued wake already says the same
                await self.submit(room, eff.fairy_id, eff.message, "system")
        elif isinstance(eff, Moved):
            await self._save_fairy(room, eff.fairy_id)
            await room.roster.announce()

    async def _notify(self, room: RoomFairies, key: str) -> None:
        wakes = room.waits.notify(key)
        if not wakes:
            return
        if self.store is not None:
            await self.store.remove_waits(room.room_id, key)
        for w in wakes:
            # Generating: the wake queues behind the current turn; else it starts one now.
            await self.submit(room, w.agent_id, w.message, "wake")

    # -- persistence ---------------------------------------------------------------------
    async def _remember(self, room: RoomFairies, fairy_id: str, items: list[HistoryItem]) -> None:
        room.history.setdefault(fairy_id, []).extend(items)
        if self.store is not None:
            await self.store.append_history(room.room_id, fairy_id, [history_row(i) for i in items])

    async def _save_fairy(self, room: RoomFairies, fairy_id: str) -> None:
        if self.store is not None:
            fairy = room.roster.get(fairy_id)
            row = fairy_row(
                fairy,
                room.continuations.get(fairy_id, 0),
                asker=room.askers.get(fairy_id),
                model=room.models.get(fairy_id),
            )
            await self.store.save_fairy(room.room_id, row)

    async def _persist_board(self, room: RoomFairies) -> None:
        changed, deleted = room.board.drain()
        if self.store is None:
            return
        for obj in changed:
            if isinstance(obj, Task):
                await self.store.save_task(task_row(obj))
            else:
                await self.store.save_project(project_row(obj))
        for tid in deleted:
            await self.store.delete_task(tid)

    # -- reporting -----------------------------------------------------------------------
    def project_summary(self, room_id: str) -> dict[str, Any] | None:
        """The `project` key of `steward demo --headless --json` (latest project)."""
        room = self.rooms.get(room_id)
        if room is None or not room.board.projects:
            return None
        project = list(room.board.projects.values())[-1]
        tasks = room.board.project_tasks(project.id)
        return {
            "status": project.status,
            "tasks": len(tasks),
            "tasks_done": sum(1 for t in tasks if t.status == "done"),
            "drones": len(project.members),
            "orchestrator_actions": room.stats.orchestrator_actions,
            "drone_actions": room.stats.drone_actions,
            "history_tokens_orchestrator": room.stats.history_tokens_orchestrator,
            "history_tokens_unfiltered": room.stats.history_tokens_unfiltered,
            "task_bounds": [t.bounds.to_dict() for t in tasks if t.bounds is not None],
        }


def _origin(origin: str) -> PromptOrigin:
    return origin if origin in ("user", "system", "self", "fairy") else "system"  # type: ignore[return-value]
