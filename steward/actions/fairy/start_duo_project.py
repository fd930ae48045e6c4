"""`start-duo-project`: start a project with your partner."""

from __future__ import annotations

from steward.actions.fairy.guides import PLAN
from steward.actions.fairy.projects import start_project
from steward.actions.fairy.schemas import Project
from steward.actions.fairy.spec import fairy_spec

START_DUO_PROJECT = fairy_spec(
    "start-duo-project",
    schema=Project,
    description="Start a project with your partner.",
    guide=PLAN,
    effect=start_project("duo"),
    plans=True,
)
