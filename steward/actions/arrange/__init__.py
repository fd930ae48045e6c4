"""The arrange actions (moved here whole; split into one module per action next)."""

from steward.actions.arrange.place import *  # noqa: F403
