"""`direct-to-start-project-task`: tell a member to start a task now."""

from __future__ import annotations

from steward.actions.fairy.guides import DIRECT
from steward.actions.fairy.projects import direct
from steward.actions.fairy.schemas import Direct
from steward.actions.fairy.spec import fairy_spec

DIRECT_TO_START_PROJECT_TASK = fairy_spec(
    "direct-to-start-project-task",
    schema=Direct,
    description="Tell a member to start a task now.",
    guide=DIRECT,
    effect=direct,
)
