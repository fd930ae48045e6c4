"""`start-duo-task`: work one of the duo tasks yourself."""

from __future__ import annotations

from steward.actions.fairy.own_tasks import start_own_task
from steward.actions.fairy.schemas import TaskRef
from steward.actions.fairy.spec import fairy_spec

# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_START_DUO_TASK = """Work one of the project's tasks yourself: until it is done you see and edit
only inside its area."""

START_DUO_TASK = fairy_spec(
    "start-duo-task",
    schema=TaskRef,
    description="Work one of the duo tasks yourself.",
    guide=_START_DUO_TASK,
    effect=start_own_task("working-orchestrator"),
)
