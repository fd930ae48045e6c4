"""`start-project`: start a project: title, description and a brief plan."""

from __future__ import annotations

from steward.actions.fairy.guides import PLAN
from steward.actions.fairy.projects import start_project
from steward.actions.fairy.schemas import Project
from steward.actions.fairy.spec import fairy_spec

START_PROJECT = fairy_spec(
    "start-project",
    schema=Project,
    description="Start a project: title, description and a brief plan.",
    guide=PLAN,
    effect=start_project("orchestrated"),
    plans=True,
)
