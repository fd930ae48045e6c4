"""`await-duo-tasks-completion`: wait until these duo tasks are done."""

from __future__ import annotations

from steward.actions.fairy.guides import AWAIT
from steward.actions.fairy.projects import await_tasks
from steward.actions.fairy.schemas import Await
from steward.actions.fairy.spec import fairy_spec

AWAIT_DUO_TASKS_COMPLETION = fairy_spec(
    "await-duo-tasks-completion",
    schema=Await,
    description="Wait until these duo tasks are done.",
    guide=AWAIT,
    effect=await_tasks("duo-orchestrating-waiting"),
)
