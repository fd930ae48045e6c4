"""The one mode table: for each mode, its memory level, the actions it may take (names in
`steward.actions.registry`), the prompt parts it sees (names in `steward.prompt.registry`)
and its lifecycle hooks. A one-shot prompt runs in `one-shotting`.

Hooks are pure: they read `ModeFacts` (a snapshot of the fairy's situation) and return a
`Transition` (switch mode, schedule a self prompt, or refuse a cancel). The fairy runtime
applies the transition, so the whole machine is testable without a model or a room.

Actions are checked by the kind on their spec (`ActionSpec.kind`): `canvas` (edits the
canvas: create, update, move, …), `talk` (message, think, review, todo, …; never changes the
canvas) and `fairy` (the fairy actions, listed by name per mode). The modes' names are
`steward.actions.fairy_port.ModeName`, the vocabulary fairy actions speak too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from steward.actions.base import ActionKind
from steward.actions.fairy_port import ModeName as ModeName
from steward.actions.registry import ACTIONS
from steward.config import ModelRole
from steward.fairies.kinds import BY_ROLE
from steward.fairies.kinds import Role as Role
from steward.fairies.memory import MemoryLevel

CancelSource = Literal["user", "system", "self"]

# A fairy that keeps ending turns without finishing gets this many nudges, then stops.
MAX_CONTINUATIONS = 3

SOLO_ACTIONS = frozenset({"create-task", "start-task", "fly-to-bounds"})
PROJECT_ACTIONS = frozenset(
    {
        "start-project",
        "create-project-task",
        "delete-project-task",
        "direct-to-start-project-task",
        "await-tasks-completion",
        "end-project",
        "abort-project",
        "fly-to-bounds",
    }
)
DUO_ACTIONS = frozenset(
    {
        "start-duo-project",
        "create-duo-task",
        "direct-to-start-duo-task",
        "start-duo-task",
        "await-duo-tasks-completion",
        "end-duo-project",
        "abort-duo-project",
        "fly-to-bounds",
    }
)
ALL_FAIRY_ACTIONS = (
    SOLO_ACTIONS
    | PROJECT_ACTIONS
    | DUO_ACTIONS
    | frozenset({"mark-task-done", "mark-duo-task-done", "mark-my-task-done"})
)

# Prompt part names (`steward.prompt.registry.PARTS`). Every mode that generates sees who it
# is, its memory-levelled history, the request and what became of its last actions (lints);
# seeing modes get the kit's canvas view.
BASE_PARTS = (
    "system",
    "personality",
    "other_fairies",
    "chat_history",
    "lints",
    "time",
    "request_line",
)
SEEING_PARTS = ("screenshot", "viewport", "blurry_shapes", "peripheral_clusters", "selected_shapes")
CANVAS_PARTS = (*SEEING_PARTS, "context_items", "user_actions", "todo_list", "data")
# A fairy working a task sees only its area: no clusters elsewhere, no moving its view away.
WORK_PARTS = tuple(p for p in CANVAS_PARTS if p != "peripheral_clusters")
CONFINED = frozenset({"setMyView", "clear"})


@dataclass(frozen=True)
class ModeFacts:
    """What the hooks may look at; built by the runtime from its state."""

    role: Role = "solo"
    project_active: bool = False
    task_in_progress: bool = False  # the fairy's own working task is still open
    open_solo_tasks: int = 0  # todo solo tasks assigned to the fairy
    waiting_on: int = 0  # persisted wait conditions of this fairy
    continuations: int = 0  # self prompts in a row without user input
    cancel_source: CancelSource = "user"


@dataclass(frozen=True)
class Transition:
    """What a mode hook asks for: a mode to switch to, a request to schedule, or a refusal of a
    cancel."""

    mode: ModeName | None = None
    schedule: str | None = None
    refuse: str | None = None  # for on_prompt_cancel: why the cancel is refused


STAY = Transition()
Hook = Callable[[ModeFacts], Transition]


def _stay(_: ModeFacts) -> Transition:
    return STAY


@dataclass(frozen=True)
class ModeDefinition:
    """One row of the mode table: memory level, actions, prompt parts, what it may do, and its
    lifecycle hooks."""

    name: ModeName
    memory: MemoryLevel
    fairy_actions: frozenset[str]
    canvas: bool  # may edit the canvas
    talk: bool  # may message/think
    parts: tuple[str, ...]
    generates: bool  # a model turn runs in this mode (False: it waits)
    withheld: frozenset[str] = frozenset()  # actions of its kinds this mode still lacks
    on_enter: Hook = _stay
    on_exit: Hook = _stay
    on_prompt_start: Hook = _stay
    on_prompt_end: Hook = _stay
    on_prompt_cancel: Hook = _stay

    @property
    def actions(self) -> tuple[str, ...]:
        """Every action this mode offers, in registry order."""
        return tuple(
            n
            for n, s in ACTIONS.items()
            if s.offered and n not in self.withheld and self.allows(n, s.kind)
        )

    def allows(self, name: str, kind: ActionKind) -> bool:
        if name in self.withheld:
            return False
        if kind == "canvas":
            return self.canvas
        if kind == "talk":
            return self.talk
        return name in self.fairy_actions

    def refusal(self, name: str, kind: ActionKind) -> str:
        """Feedback for the model when it used an action its mode does not allow."""
        if kind == "canvas":
            why = "You cannot edit the canvas in this mode" + (
                ": orchestrators direct drones instead." if "orchestrat" in self.name else "."
            )
        else:
            why = f'The action "{name}" is not available in this mode.'
        usable = sorted(self.fairy_actions)
        extra = f" Available fairy actions: {', '.join(usable)}." if usable else ""
        return f"[{self.name}] {why}{extra}"


# -- hooks -------------------------------------------------------------------------------


def _start_by_role(f: ModeFacts) -> Transition:
    return Transition(mode=START_MODE[f.role])


# The mode a user's prompt starts a fairy of each role in, and the mode it works one of its
# own tasks in (a lead only works in a duo): its kind's (`kinds.py`).
START_MODE: dict[Role, ModeName] = {r: k.start_mode for r, k in BY_ROLE.items()}
WORKING_MODE: dict[Role, ModeName] = {
    r: k.working_mode for r, k in BY_ROLE.items() if k.working_mode is not None
}


def _back_to_idle(_: ModeFacts) -> Transition:
    return Transition(mode="idling")


def _soloing_end(f: ModeFacts) -> Transition:
    if f.open_solo_tasks and f.continuations < MAX_CONTINUATIONS:
        return Transition(
            schedule="Start your next task with start-task, or tell the user why not."
        )
    return Transition(mode="idling")


def _working_end(back: ModeName, nudge: str) -> Hook:
    def hook(f: ModeFacts) -> Transition:
        if f.task_in_progress and f.continuations < MAX_CONTINUATIONS:
            return Transition(schedule=nudge)
        return Transition(mode=back)

    return hook


def _to(mode: ModeName) -> Hook:
    def hook(_: ModeFacts) -> Transition:
        return Transition(mode=mode)

    return hook


def _orchestrating_end(waiting: ModeName, end_action: str) -> Hook:
    def hook(f: ModeFacts) -> Transition:
        if not f.project_active:
            return Transition(mode="idling")
        if f.waiting_on:
            return Transition(mode=waiting)
        if f.continuations < MAX_CONTINUATIONS:
            return Transition(
                schedule="Your project is still active. Start tasks, await them, or use "
                f"{end_action} when the work is complete."
            )
        return Transition(mode=waiting)

    return hook


def _protected_cancel(f: ModeFacts) -> Transition:
    """Users cannot stop an orchestrator mid-project; the system (abort, disband) can."""
    if f.project_active and f.cancel_source == "user":
        return Transition(refuse="This fairy is leading a project and cannot be cancelled.")
    return STAY


def _wake(active: ModeName) -> Hook:
    return _to(active)


# -- the modes ---------------------------------------------------------------------------

TALK_ONLY: frozenset[str] = frozenset()
_W_NUDGE = "Your task is not marked done. Continue it, then mark it done."

MODES: dict[ModeName, ModeDefinition] = {
    m.name: m
    for m in (
        ModeDefinition(
            "idling",
            memory="fairy",
            fairy_actions=TALK_ONLY,
            canvas=False,
            talk=False,
            parts=BASE_PARTS,
            generates=False,
            on_prompt_start=_start_by_role,
        ),
        ModeDefinition(
            "sleeping",
            memory="fairy",
            fairy_actions=TALK_ONLY,
            canvas=False,
            talk=False,
            parts=BASE_PARTS,
            generates=False,
            on_prompt_start=_start_by_role,
        ),
        ModeDefinition(
            "one-shotting",
            memory="fairy",
            fairy_actions=frozenset({"fly-to-bounds"}),
            canvas=True,
            talk=True,
            parts=BASE_PARTS + CANVAS_PARTS,
            generates=True,
            on_prompt_end=_back_to_idle,
            on_prompt_cancel=_back_to_idle,
        ),
        ModeDefinition(
            "soloing",
            memory="fairy",
            fairy_actions=SOLO_ACTIONS,
            canvas=False,
            talk=True,
            parts=(*BASE_PARTS, *CANVAS_PARTS, "tasks"),
            generates=True,
            on_prompt_end=_soloing_end,
            on_prompt_cancel=_back_to_idle,
        ),
        ModeDefinition(
            "working-solo",
            memory="task",
            fairy_actions=frozenset({"mark-task-done", "fly-to-bounds"}),
            canvas=True,
            talk=True,
            parts=(*BASE_PARTS, *WORK_PARTS, "tasks"),
            generates=True,
            withheld=CONFINED,
            on_prompt_end=_working_end("soloing", _W_NUDGE),
            on_prompt_cancel=_to("soloing"),
        ),
        ModeDefinition(
            "standing-by",
            memory="project",
            fairy_actions=TALK_ONLY,
            canvas=False,
            talk=True,
            parts=(*BASE_PARTS, "project"),
            generates=False,
        ),
        ModeDefinition(
            "orchestrating-active",
            memory="project",
            fairy_actions=PROJECT_ACTIONS,
            canvas=False,
            talk=True,
            parts=(*BASE_PARTS, *SEEING_PARTS, "project", "drawable"),
            generates=True,
            on_prompt_end=_orchestrating_end("orchestrating-waiting", "end-project"),
            on_prompt_cancel=_protected_cancel,
        ),
        ModeDefinition(
            "orchestrating-waiting",
            memory="project",
            fairy_actions=TALK_ONLY,
            canvas=False,
            talk=False,
            parts=(*BASE_PARTS, "project"),
            generates=False,
            on_prompt_start=_wake("orchestrating-active"),
            on_prompt_cancel=_protected_cancel,
        ),
        ModeDefinition(
            "duo-orchestrating-active",
            memory="project",
            fairy_actions=DUO_ACTIONS,
            canvas=False,
            talk=True,
            parts=(*BASE_PARTS, *SEEING_PARTS, "project", "drawable"),
            generates=True,
            on_prompt_end=_orchestrating_end("duo-orchestrating-waiting", "end-duo-project"),
            on_prompt_cancel=_protected_cancel,
        ),
        ModeDefinition(
            "duo-orchestrating-waiting",
            memory="project",
            fairy_actions=TALK_ONLY,
            canvas=False,
            talk=False,
            parts=(*BASE_PARTS, "project"),
            generates=False,
            on_prompt_start=_wake("duo-orchestrating-active"),
            on_prompt_cancel=_protected_cancel,
        ),
        ModeDefinition(
            "working-drone",
            memory="task",
            fairy_actions=frozenset({"mark-my-task-done"}),
            canvas=True,
            talk=True,
            parts=(*BASE_PARTS, *WORK_PARTS, "neighbours", "project", "tasks"),
            generates=True,
            withheld=CONFINED,
            on_prompt_end=_working_end("standing-by", _W_NUDGE),
            on_prompt_cancel=_to("standing-by"),
        ),
        ModeDefinition(
            "working-orchestrator",
            memory="task",
            fairy_actions=frozenset({"mark-duo-task-done"}),
            canvas=True,
            talk=True,
            parts=(*BASE_PARTS, *WORK_PARTS, "neighbours", "project", "tasks"),
            generates=True,
            withheld=CONFINED,
            on_prompt_end=_working_end("duo-orchestrating-active", _W_NUDGE),
            on_prompt_cancel=_to("duo-orchestrating-active"),
        ),
    )
}

ORCHESTRATING_MODES: frozenset[ModeName] = frozenset(
    {
        "orchestrating-active",
        "orchestrating-waiting",
        "duo-orchestrating-active",
        "duo-orchestrating-waiting",
    }
)
WORKING_MODES: frozenset[ModeName] = frozenset(
    {"working-solo", "working-drone", "working-orchestrator"}
)


def model_role(name: ModeName) -> ModelRole:
    """Whose model a turn in this mode runs on (`Settings.model_for_role`)."""
    if name in ("orchestrating-active", "orchestrating-waiting"):
        return "orchestrator"
    if name in ("duo-orchestrating-active", "duo-orchestrating-waiting", "working-orchestrator"):
        return "duo"
    if name in ("working-drone", "standing-by"):
        return "drone"
    return "one-shot"


def mode(name: str) -> ModeDefinition:
    if name not in MODES:
        raise KeyError(f"unknown fairy mode: {name}")
    return MODES[name]  # type: ignore[index,unused-ignore]


def is_mode(name: str) -> bool:
    return name in MODES
