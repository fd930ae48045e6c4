"""What an action may do beyond the canvas: its effect, against the operations it may call.

`FairyOps` is implemented by the fairy runtime's effect context, so a fairy action's spec
names its own effect without `steward.actions` importing `steward.fairies`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol

# The modes and kinds the fairy actions lead to (a subset of `steward.fairies.modes`).
WorkingMode = Literal["working-solo", "working-orchestrator"]
DoneMode = Literal["soloing", "duo-orchestrating-active", "standing-by"]
WaitingMode = Literal["orchestrating-waiting", "duo-orchestrating-waiting"]
DoneMemory = Literal["fairy", "project"]
ProjectKindName = Literal["orchestrated", "duo"]


class FairyOps(Protocol):
    """The fairy board's operations; each raises `FairyMistake` when its rules forbid it."""

    def create_solo_task(self, data: dict[str, Any]) -> None: ...
    def start_own_task(self, data: dict[str, Any], working: WorkingMode) -> None: ...
    def mark_done(self, back: DoneMode, level: DoneMemory) -> None: ...
    def start_project(self, data: dict[str, Any], kind: ProjectKindName) -> None: ...
    def create_project_task(self, data: dict[str, Any]) -> None: ...
    def delete_project_task(self, data: dict[str, Any]) -> None: ...
    def direct(self, data: dict[str, Any]) -> None: ...
    def await_tasks(self, data: dict[str, Any], waiting: WaitingMode) -> None: ...
    def end_project(self) -> None: ...
    def abort_project(self) -> None: ...
    def fly_to(self, data: dict[str, Any]) -> None: ...


# A complete action's effect on the fairies' board (sanitized data in the page's coordinates).
ActionEffect = Callable[[FairyOps, dict[str, Any]], None]
