"""The fairy port: what a fairy action's effect may read and do.

A fairy action (`steward/actions/fairy/`) carries its whole effect: it checks the board's
rules, then asks the acting fairy to react (switch its mode, interrupt another fairy, wait, notify
waiters, remember, review, move, end the turn). The fairy runtime implements `FairyPort`
(`steward/fairies/acting.py`) and `ProjectBoard` (`steward/fairies/projects.py`) is a
`Board`, so `steward.actions` never imports `steward.fairies`.

The fairy modes' names and the project kinds live here, the one place both sides can
import: `steward.fairies.modes` defines what each mode is, under these names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal, Protocol

from steward.protocol.box import Box

ModeName = Literal[
    "idling",
    "sleeping",
    "one-shotting",
    "soloing",
    "working-solo",
    "standing-by",
    "orchestrating-active",
    "orchestrating-waiting",
    "duo-orchestrating-active",
    "duo-orchestrating-waiting",
    "working-drone",
    "working-orchestrator",
]
ProjectKind = Literal["orchestrated", "duo"]


class TaskView(Protocol):
    """A task on the board, as an effect reads it."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def assigned_to(self) -> str | None: ...
    @property
    def bounds(self) -> Box | None: ...


class ProjectView(Protocol):
    """A project on the board, as an effect reads it."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def orchestrator(self) -> str: ...
    @property
    def members(self) -> tuple[str, ...]: ...


class Board(Protocol):
    """The room's projects and tasks; every rule a model can break raises `FairyMistake`."""

    def active_project_of(self, fairy_id: str) -> ProjectView | None: ...
    def task(self, task_id: str) -> TaskView: ...
    def start_project(
        self,
        orchestrator: str,
        *,
        title: str,
        description: str,
        plan: str,
        members: Iterable[str],
        kind: ProjectKind = "orchestrated",
        project_id: str | None = None,
    ) -> ProjectView: ...
    def create_project_task(
        self,
        by: str,
        *,
        title: str,
        text: str,
        bounds: Box,
        assignee: str | None,
        task_id: str | None = None,
    ) -> TaskView: ...
    def delete_project_task(self, by: str, task_id: str) -> TaskView: ...
    def direct(self, by: str, task_id: str, to: str | None = None) -> TaskView: ...
    def start_own_task(self, by: str, task_id: str) -> TaskView: ...
    def create_solo_task(
        self, by: str, *, title: str, text: str, bounds: Box | None, task_id: str | None = None
    ) -> TaskView: ...
    def mark_done(self, by: str, task_id: str | None = None) -> TaskView: ...
    def awaitable(self, by: str, task_ids: Iterable[str]) -> list[str]: ...
    def end_project(self, by: str) -> ProjectView: ...
    def abort_project(self, project_id: str) -> tuple[ProjectView, list[Any]]: ...


class FairyPort(Protocol):
    """The fairy that took the action, and how it reacts.

    The board changes at once; each reaction is carried out, in the order asked, after the
    action is recorded (so a rule broken half-way leaves no reaction behind)."""

    @property
    def fairy_id(self) -> str: ...
    @property
    def board(self) -> Board: ...
    def free_drones(self) -> list[str]:
        """The other fairies a project may take on: drones in no active project."""
        ...

    def move(self, area: Box) -> None:
        """Fly this fairy to `area`; the others see it go."""
        ...

    def switch_mode(self, mode: ModeName, work: str | None = None) -> None:
        """This fairy goes to `mode`; `work`, if any, is its next prompt."""
        ...

    def interrupt(self, fairy_id: str, mode: ModeName, work: str | None = None) -> None:
        """Another fairy goes to `mode` (working for the same asker, on the same model)."""
        ...

    def wait(self, wakes: list[tuple[str, str]]) -> None:
        """Wait on each key; its message is the prompt that wakes this fairy."""
        ...

    def notify_task_done(self, task_id: str) -> None:
        """Wake whoever waits for this task."""
        ...

    def remember_task_end(self, task: TaskView, back: ModeName) -> None:
        """This fairy finished `task`: its memory of it, at the level of the mode it goes
        back to."""
        ...

    def remember_project_end(self, fairy_id: str, project: ProjectView) -> None:
        """`fairy_id` (the lead or a member) remembers that `project` is complete."""
        ...

    def review(self, message: str) -> None:
        """Nothing to wait for: this fairy's next prompt is `message`, unless a wake is
        already queued."""
        ...

    def end_turn(self) -> None:
        """Drop the rest of this turn's actions."""
        ...


# A complete fairy action's effect (sanitized data in the page's coordinates).
ActionEffect = Callable[[FairyPort, dict[str, Any]], None]
