"""`abort-duo-project`: abort the duo project."""

from __future__ import annotations

from steward.actions.fairy.guides import ABORT
from steward.actions.fairy.projects import abort_project
from steward.actions.fairy.schemas import Nothing
from steward.actions.fairy.spec import fairy_spec

ABORT_DUO_PROJECT = fairy_spec(
    "abort-duo-project",
    schema=Nothing,
    description="Abort the duo project.",
    guide=ABORT,
    effect=abort_project,
)
