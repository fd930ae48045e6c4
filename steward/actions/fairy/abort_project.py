"""`abort-project`: abort the project; running tasks stop."""

from __future__ import annotations

from steward.actions.fairy.guides import ABORT
from steward.actions.fairy.projects import abort_project
from steward.actions.fairy.schemas import Nothing
from steward.actions.fairy.spec import fairy_spec

ABORT_PROJECT = fairy_spec(
    "abort-project",
    schema=Nothing,
    description="Abort the project; running tasks stop.",
    guide=ABORT,
    effect=abort_project,
)
