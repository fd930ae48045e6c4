"""`mark-task-done`: mark your current solo task done."""

from __future__ import annotations

from steward.actions.fairy.guides import DONE
from steward.actions.fairy.own_tasks import mark_done
from steward.actions.fairy.schemas import Nothing
from steward.actions.fairy.spec import fairy_spec

MARK_TASK_DONE = fairy_spec(
    "mark-task-done",
    schema=Nothing,
    description="Mark your current solo task done.",
    guide=DONE,
    effect=mark_done("soloing"),
)
