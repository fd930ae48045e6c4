"""The communicate actions (moved here whole; split into one module per action next)."""

from steward.actions.communicate.review import *  # noqa: F403
