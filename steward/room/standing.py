"""What stands in the room besides the canvas, as the browsers see it: the fairies' presence
(`agent:fairies`) and each recent project's state (`agent:project`). Each is sent to everyone
when it changes and kept, so a tab that joins is sent the presence and the project cards the
others already show."""

from __future__ import annotations

from collections import OrderedDict

from steward.protocol.messages import FairiesMessage, ProjectState
from steward.protocol.names import TOPIC_FAIRIES, TOPIC_PROJECT
from steward.room.intake import RateLimiter
from steward.room.messenger import Messenger

# Projects whose last state a joining tab is sent (the newest; older cards are history).
KEPT_PROJECTS = 20
# Catch-ups one tab is sent a minute (a join and each whole-room resync ask for one).
CATCH_UPS_PER_MIN = 10


class Standing:
    def __init__(self, messenger: Messenger, *, kept: int = KEPT_PROJECTS) -> None:
        self._messenger = messenger
        self._kept = kept
        self._presence: FairiesMessage | None = None
        self._projects: OrderedDict[str, ProjectState] = OrderedDict()
        self._limit = RateLimiter(CATCH_UPS_PER_MIN)

    def project(self, project_id: str) -> ProjectState | None:
        return self._projects.get(project_id)

    async def fairies(self, message: FairiesMessage) -> None:
        """The fairies moved, changed mode or name, came or went."""
        self._presence = message
        await self._messenger.publish(message.to_wire(), TOPIC_FAIRIES)

    async def publish(self, state: ProjectState) -> None:
        """A project changed: kept (newest last) and sent to everyone."""
        self._projects.pop(state.project_id, None)
        self._projects[state.project_id] = state
        while len(self._projects) > self._kept:
            self._projects.popitem(last=False)
        await self._messenger.publish(state.to_wire(), TOPIC_PROJECT)

    async def joined(self, identity: str) -> None:
        """A tab joined: the fairies as they are, then the projects it missed, oldest first
        (at most `CATCH_UPS_PER_MIN` times a minute per tab: resyncs cannot amplify)."""
        if not self._limit.allow(identity):
            return
        if self._presence is not None:
            await self._messenger.publish(self._presence.to_wire(), TOPIC_FAIRIES, to=[identity])
        for state in list(self._projects.values()):
            await self._messenger.publish(state.to_wire(), TOPIC_PROJECT, to=[identity])
