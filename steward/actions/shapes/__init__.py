"""The shapes actions (moved here whole; split into one module per action next)."""

from steward.actions.shapes.create import *  # noqa: F403
