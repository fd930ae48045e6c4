"""`await-tasks-completion`: wait until these tasks are done, woken as each one completes."""

from __future__ import annotations

from steward.actions.fairy.guides import AWAIT
from steward.actions.fairy.projects import await_tasks
from steward.actions.fairy.schemas import Await
from steward.actions.fairy.spec import fairy_spec

AWAIT_TASKS_COMPLETION = fairy_spec(
    "await-tasks-completion",
    schema=Await,
    description="Wait until these tasks are done; you are woken as each one completes.",
    guide=AWAIT,
    effect=await_tasks("orchestrating-waiting"),
)
