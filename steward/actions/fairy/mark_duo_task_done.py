"""`mark-duo-task-done`: mark the duo task you are working on done."""

from __future__ import annotations

from steward.actions.fairy.guides import DONE
from steward.actions.fairy.own_tasks import mark_done
from steward.actions.fairy.schemas import Nothing
from steward.actions.fairy.spec import fairy_spec

MARK_DUO_TASK_DONE = fairy_spec(
    "mark-duo-task-done",
    schema=Nothing,
    description="Mark the duo task you are working on done.",
    guide=DONE,
    effect=mark_done("duo-orchestrating-active"),
)
