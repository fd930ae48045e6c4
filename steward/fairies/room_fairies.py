"""What the fairy runtime holds per room and per fairy, in memory.

`RoomFairies` is one room's shared state: its roster, project board, waits, the view the
room's browsers last reported, the coordinate origin every fairy shares, and one `Fairy
State` per fairy. `FairyState` is everything about one fairy's work that is not its roster
entry: its durable history, request queue, worker and current turn, session, the model and
participant it works for, its own view and todo list, and the counters of its feedback.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from steward.actions.base import TodoItem
from steward.fairies.asked import CREW_ASKED, Asked
from steward.fairies.kinds import ONE_SHOT, RequestKind, of_role
from steward.fairies.memory import HistoryItem
from steward.fairies.modes import ModeFacts
from steward.fairies.projects import ProjectBoard
from steward.fairies.roster import Roster
from steward.fairies.run_feedback import RunFeedback
from steward.fairies.waits import WaitBoard
from steward.ports import PromptChannel, SessionPort
from steward.protocol.box import Box
from steward.task_set import TaskSet

if TYPE_CHECKING:
    from steward.fairies.one_shot_job import OneShotJob

DEFAULT_VIEW = Box(0, 0, 1600, 900)

# The one-shotting fairies (one per asker) are kept off the roster: no presence, no crew.
ONE_SHOT_PREFIX = "one-shot:"


def one_shot_id(asker: str) -> str:
    """The id of the one-shotting fairy that answers `asker`'s one-shot prompts."""
    return ONE_SHOT_PREFIX + asker


def is_one_shot(fairy_id: str) -> bool:
    return fairy_id.startswith(ONE_SHOT_PREFIX)


@dataclass
class Request:
    """One queued request of a fairy (a user's prompt, a wake, feedback, a continuation)."""

    text: str
    origin: str  # user | system | self | wake
    request_id: int | None = None
    resume_session: str | None = None  # a request a dead process left running
    # A one-shot prompt's request: its session, model, guards and the outcome awaited.
    # Not written to Postgres (its session dies with the process: nothing to resume).
    job: OneShotJob | None = None

    @property
    def asked(self) -> Asked:
        return self.job.asked if self.job is not None else CREW_ASKED


@dataclass
class ProjectStats:
    """Counts over a room's projects for its summary (`steward demo --headless --json`): actions
    by role and the history the orchestrator was shown."""

    orchestrator_actions: int = 0
    drone_actions: int = 0
    # Summed over the orchestrator's turns: the history it was shown (filtered by its
    # memory level) and what one fairy that had done all the work would have been shown.
    history_tokens_orchestrator: int = 0
    history_tokens_unfiltered: int = 0


@dataclass
class FairyState:
    """One fairy's work in its room (its roster entry holds name, role, mode, position)."""

    fairy_id: str
    history: list[HistoryItem] = field(default_factory=list)
    # Continuation prompts its mode scheduled since the last user prompt (capped by modes).
    continuations: int = 0
    queue: deque[Request] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None  # runs the queue, one request at a time
    turn: asyncio.Task[None] | None = None  # the request being run (with its follow-ups)
    current: Request | None = None  # which request that is
    session: SessionPort | None = None  # the session its turns stream into
    lent: SessionPort | None = None  # a caller's session (a user's prompt), not its own
    # The model its turns use: the one its user's prompt named, passed on to the fairies it
    # directs (saved with the fairy, so a resumed project keeps it).
    model: str | None = None
    # Whom it works for: the participant whose prompt started its work, passed on to the
    # fairies it directs, so a project's sessions have an owner for cancel rights (saved
    # with the fairy: a restart that resumes the project keeps the owner).
    asker: str | None = None
    # How that prompt came (panel, lk.chat, voice, HTTP), in memory: its request says so.
    channel: PromptChannel | None = None
    # It interrupted itself with new input this turn (start-task, …): the old prompt is
    # over, so its on_prompt_end hook must not also schedule a nudge.
    self_interrupted: bool = False
    # Feedback turns in a row (refusals, mistakes), and whether it made a mistake this turn.
    feedback_streak: int = 0
    mistaken: bool = False
    user_cancelled: bool = False  # a user stopped its current turn
    # Its own view (setMyView moves it) and todo list, in memory only.
    view: Box | None = None
    todo: list[TodoItem] = field(default_factory=list)
    # The fairies picked with it, when a prompt picked them and it leads them (its project
    # takes these, not every free drone); in memory only.
    picked: tuple[str, ...] | None = None


@dataclass
class RoomFairies:
    """One room's fairies in memory: roster, project board, waits, each fairy's state and the tasks
    that run them."""

    room_id: str
    roster: Roster
    board: ProjectBoard
    waits: WaitBoard = field(default_factory=WaitBoard)
    fairies: dict[str, FairyState] = field(default_factory=dict)
    stats: ProjectStats = field(default_factory=ProjectStats)
    background: TaskSet = field(default_factory=lambda: TaskSet("fairy_task_failed"))
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    # Set (and replaced by a fresh one) each time a fairy's worker ends.
    worker_ended: asyncio.Event = field(default_factory=asyncio.Event)
    viewport: Box = DEFAULT_VIEW
    # The room's coordinate origin for the model (the first view a fairy got), in memory.
    origin: tuple[float, float] | None = None
    # Model requests per session, for wire ids `{session}.{request}.{index}`.
    requests: dict[str, int] = field(default_factory=dict)
    # [run-feedback hook] per run (session and fairy: a session may be lent to another
    # fairy): notes and lints for its next request.
    feedback: RunFeedback = field(default_factory=RunFeedback)
    # Which task made each shape (shape id → task id), as its fairy's turns drew them, in
    # memory: neighbours are credited to their author, not to whichever area holds them.
    made_by: dict[str, str] = field(default_factory=dict)

    def credit(self, task_id: str, created: Iterable[str]) -> None:
        """Credit the shapes a turn made to the task its fairy was working."""
        self.made_by.update(dict.fromkeys(created, task_id))

    def fairy(self, fairy_id: str) -> FairyState:
        """The fairy's state (made on first use: a roster entry needs no work yet)."""
        state = self.fairies.get(fairy_id)
        if state is None:
            state = self.fairies[fairy_id] = FairyState(fairy_id)
        return state

    def working(self) -> list[asyncio.Task[None]]:
        """The workers running now."""
        return [f.worker for f in self.fairies.values() if f.worker is not None]

    def crew_working(self) -> list[asyncio.Task[None]]:
        """The crew's workers running now (a one-shot run never holds up the crew's prompt)."""
        return [
            f.worker
            for f in self.fairies.values()
            if f.worker is not None and not is_one_shot(f.fairy_id)
        ]

    def kind_of(self, fairy_id: str) -> RequestKind:
        """The kind of request the fairy works: a one-shotting fairy's are one-shot prompts,
        a crew fairy's follow its role."""
        if is_one_shot(fairy_id):
            return ONE_SHOT
        return of_role(self.roster.get(fairy_id).role)

    def free_members(self, lead_id: str) -> list[str]:
        """The drones free to join the project `lead_id` starts: the ones picked with it
        when a prompt picked them, else every drone of the room in no active project."""
        picked = self.fairy(lead_id).picked
        ids = picked if picked is not None else tuple(self.roster.fairies)
        return [
            fid
            for fid in ids
            if fid != lead_id
            and (f := self.roster.fairies.get(fid)) is not None
            and f.role == "drone"
            and self.board.active_project_of(fid) is None
        ]

    def busy(self, fairy_id: str) -> str | None:
        """What the fairy is busy with (its mode), or None when it is free to be picked."""
        fairy = self.roster.get(fairy_id)
        state = self.fairies.get(fairy_id)
        queued = state is not None and (state.worker is not None or bool(state.queue))
        in_project = self.board.active_project_of(fairy_id) is not None
        if fairy.mode in ("idling", "sleeping") and not queued and not in_project:
            return None
        return fairy.mode

    def history_of(self, fairy_id: str) -> list[HistoryItem]:
        state = self.fairies.get(fairy_id)
        return state.history if state is not None else []

    def lead(self) -> str:
        """The fairy a prompt for the room's fairies reaches when it names none."""
        for f in self.roster.fairies.values():
            if of_role(f.role).leads:
                return f.id
        return next(iter(self.roster.fairies))

    def facts(self, fairy_id: str, source: str = "user") -> ModeFacts:
        """What the mode machine's hooks decide on, for one fairy now."""
        fairy = self.roster.get(fairy_id)
        task = self.board.working_task_of(fairy_id)
        open_solo = [t for t in self.board.solo_tasks_of(fairy_id) if t.status == "todo"]
        return ModeFacts(
            role=fairy.role,
            project_active=self.board.active_project_of(fairy_id) is not None,
            task_in_progress=task is not None,
            open_solo_tasks=len(open_solo),
            waiting_on=len(self.waits.waiting_on(fairy_id)),
            continuations=self.fairy(fairy_id).continuations,
            cancel_source=source,  # type: ignore[arg-type]
        )

    def count(self, fairy_id: str, n: int) -> None:
        """`n` more actions by the fairy, for the project summary."""
        if self.kind_of(fairy_id).leads:
            self.stats.orchestrator_actions += n
        else:
            self.stats.drone_actions += n

    def project_summary(self) -> dict[str, Any] | None:
        """The `project` key of `steward demo --headless --json` (latest project)."""
        if not self.board.projects:
            return None
        project = list(self.board.projects.values())[-1]
        tasks = self.board.project_tasks(project.id)
        return {
            "status": project.status,
            "tasks": len(tasks),
            "tasks_done": sum(1 for t in tasks if t.status == "done"),
            "drones": len(project.members),
            "orchestrator_actions": self.stats.orchestrator_actions,
            "drone_actions": self.stats.drone_actions,
            "history_tokens_orchestrator": self.stats.history_tokens_orchestrator,
            "history_tokens_unfiltered": self.stats.history_tokens_unfiltered,
            "task_bounds": [t.bounds.to_dict() for t in tasks if t.bounds is not None],
        }

    def next_request(self, session_id: str) -> int:
        n = self.requests.get(session_id, 0)
        self.requests[session_id] = n + 1
        return n
