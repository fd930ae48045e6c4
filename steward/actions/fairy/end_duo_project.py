"""`end-duo-project`: end the duo project."""

from __future__ import annotations

from steward.actions.fairy.guides import END
from steward.actions.fairy.projects import end_project
from steward.actions.fairy.schemas import Nothing
from steward.actions.fairy.spec import fairy_spec

END_DUO_PROJECT = fairy_spec(
    "end-duo-project",
    schema=Nothing,
    description="End the duo project.",
    guide=END,
    effect=end_project,
)
