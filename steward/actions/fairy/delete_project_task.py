"""`delete-project-task`: delete a task that has not started."""

from __future__ import annotations

from typing import Any

from steward.actions.fairy.field_values import text_field
from steward.actions.fairy.schemas import TaskRef
from steward.actions.fairy.spec import fairy_spec
from steward.actions.fairy_port import FairyPort


def _delete_project_task(fairy: FairyPort, data: dict[str, Any]) -> None:
    fairy.board.delete_project_task(fairy.fairy_id, text_field(data, "taskId"))


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_DELETE_PROJECT_TASK = """Remove a task that has not started, when the plan changes."""

DELETE_PROJECT_TASK = fairy_spec(
    "delete-project-task",
    schema=TaskRef,
    description="Delete a task that has not started.",
    guide=_DELETE_PROJECT_TASK,
    effect=_delete_project_task,
)
