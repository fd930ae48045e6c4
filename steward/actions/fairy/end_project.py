"""`end-project`: end the project once every task is done and reviewed."""

from __future__ import annotations

from steward.actions.fairy.guides import END
from steward.actions.fairy.projects import end_project
from steward.actions.fairy.schemas import Nothing
from steward.actions.fairy.spec import fairy_spec

END_PROJECT = fairy_spec(
    "end-project",
    schema=Nothing,
    description="End the project once every task is done and reviewed.",
    guide=END,
    effect=end_project,
)
