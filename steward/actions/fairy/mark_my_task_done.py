"""`mark-my-task-done`: mark the task you were given done."""

from __future__ import annotations

from steward.actions.fairy.guides import DONE
from steward.actions.fairy.own_tasks import mark_done
from steward.actions.fairy.schemas import Nothing
from steward.actions.fairy.spec import fairy_spec

MARK_MY_TASK_DONE = fairy_spec(
    "mark-my-task-done",
    schema=Nothing,
    description="Mark the task you were given done.",
    guide=DONE,
    effect=mark_done("standing-by"),
)
