"""Each project's state as the browsers see it (`agent:project`): sent to everyone on every
change, and the room's recent ones to a tab that joins, so its cards show what the others'
do."""

from __future__ import annotations

from collections import OrderedDict

from steward.protocol.messages import ProjectState
from steward.protocol.names import TOPIC_PROJECT
from steward.room.messenger import Messenger

# Projects whose last state a joining tab is sent (the newest; older cards are history).
KEPT = 20


class ProjectStates:
    def __init__(self, messenger: Messenger, *, kept: int = KEPT) -> None:
        self._messenger = messenger
        self._kept = kept
        self._states: OrderedDict[str, ProjectState] = OrderedDict()

    def get(self, project_id: str) -> ProjectState | None:
        return self._states.get(project_id)

    async def publish(self, state: ProjectState) -> None:
        """A project changed: kept (newest last) and sent to everyone."""
        self._states.pop(state.project_id, None)
        self._states[state.project_id] = state
        while len(self._states) > self._kept:
            self._states.popitem(last=False)
        await self._messenger.publish(state.to_wire(), TOPIC_PROJECT)

    async def joined(self, identity: str) -> None:
        """A tab joined: the projects it missed, oldest first."""
        for state in list(self._states.values()):
            await self._messenger.publish(state.to_wire(), TOPIC_PROJECT, to=[identity])
