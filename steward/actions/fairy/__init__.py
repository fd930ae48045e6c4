"""The fairy actions (moved here whole; split into one module per action next)."""

from steward.actions.fairy.projects import *  # noqa: F403
