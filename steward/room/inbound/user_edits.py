"""Each participant's own canvas edits since an agent last looked on their behalf.

In relay mode every user edit passes through the steward (`canvas:edit`), so the steward
knows who changed which shape. A prompt's context carries the asker's changes since the
previous context it got (`take`), as the starter kit's "user actions" do. In host mode
edits bypass the steward and the asker's browser reports its own (see SnapshotFetcher).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

Change = Literal["created", "updated", "deleted"]
# Per participant; the oldest entries give way (the prompt shows the last few anyway).
MAX_TRACKED = 200


class UserEdits:
    """Which shapes each participant changed or removed since an agent last looked for them."""

    def __init__(self, max_tracked: int = MAX_TRACKED) -> None:
        self._max = max_tracked
        self._changes: dict[str, dict[str, Change]] = {}

    def record(
        self,
        identity: str,
        put: Iterable[str],
        removed: Iterable[str],
        exists: Callable[[str], bool],
    ) -> None:
        """`exists(id)`: whether the shape was on the canvas before this edit."""
        changes = self._changes.setdefault(identity, {})
        for sid in put:
            before = changes.pop(sid, None)
            # A shape the agent never saw stays "created" however often it is changed.
            changes[sid] = "created" if before == "created" or not exists(sid) else "updated"
        for sid in removed:
            before = changes.pop(sid, None)
            if before != "created":  # created and deleted in between: nothing to tell
                changes[sid] = "deleted"
        while len(changes) > self._max:
            del changes[next(iter(changes))]

    def take(self, identity: str | None) -> list[dict[str, str]]:
        """The changes since the previous `take` for this participant, oldest first."""
        if not identity:
            return []
        changes = self._changes.pop(identity, {})
        return [{"id": sid, "change": change} for sid, change in changes.items()]

    def forget(self, identity: str) -> None:
        self._changes.pop(identity, None)
