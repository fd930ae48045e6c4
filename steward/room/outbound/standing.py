"""What stands in the room besides the canvas, as the browsers see it: the fairies' presence
(`agent:fairies`) and each recent project's state (`agent:project`). Each is sent to everyone
when it changes and kept, so a tab that joins is sent the presence and the project cards the
others already show."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from steward.protocol.messages import FairiesMessage, ProjectState
from steward.protocol.names import TOPIC_FAIRIES, TOPIC_PROJECT
from steward.room.outbound.messenger import Messenger

# Projects whose last state a joining tab is sent (the newest; older cards are history).
KEPT_PROJECTS = 20
# One catch-up a tab asks for (a whole-room resync) this often at most, so resyncs cannot
# amplify what the steward sends; a join sends one besides.
CATCH_UP_EVERY_S = 3.0


class Standing:
    """Keeps the fairies' presence and recent project cards, and sends them on change and to tabs
    that join."""

    def __init__(
        self,
        messenger: Messenger,
        *,
        kept: int = KEPT_PROJECTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._messenger = messenger
        self._kept = kept
        self._presence: FairiesMessage | None = None
        self._projects: OrderedDict[str, ProjectState] = OrderedDict()
        self._clock = clock
        self._caught_up: dict[str, float] = {}

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
        """A tab joined: the fairies as they are, then the projects it missed, oldest first.
        Not counted against the tab's catch-ups: what is sent at a join may arrive before the
        tab listens (or before the fairies were announced), and the whole-room resync the tab
        sends once it listens must still get it."""
        await self._send(identity)

    async def asked(self, identity: str) -> None:
        """A tab asked for the whole room (a resync): what `joined` sends, once per
        `CATCH_UP_EVERY_S` per tab at most, so repeated resyncs cannot amplify it."""
        now = self._clock()
        if now - self._caught_up.get(identity, -CATCH_UP_EVERY_S) < CATCH_UP_EVERY_S:
            return
        # Tabs long gone are forgotten, so identities that come and go cannot grow it.
        self._caught_up = {i: t for i, t in self._caught_up.items() if now - t < 60.0}
        self._caught_up[identity] = now
        await self._send(identity)

    async def _send(self, identity: str) -> None:
        if self._presence is not None:
            await self._messenger.publish(self._presence.to_wire(), TOPIC_FAIRIES, to=[identity])
        for state in list(self._projects.values()):
            await self._messenger.publish(state.to_wire(), TOPIC_PROJECT, to=[identity])
