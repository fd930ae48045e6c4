"""`start-task`: start one of your own tasks; you then work inside its area."""

from __future__ import annotations

from steward.actions.fairy.own_tasks import start_own_task
from steward.actions.fairy.schemas import TaskRef
from steward.actions.fairy.spec import fairy_spec

# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_START_TASK = """Begin one of your tasks: until it is done you see and edit only inside its
area."""

START_TASK = fairy_spec(
    "start-task",
    schema=TaskRef,
    description="Start one of your own tasks; you then work inside its area.",
    guide=_START_TASK,
    effect=start_own_task("working-solo"),
)
