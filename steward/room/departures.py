"""What the room lets go of when a participant leaves or is muted, and what it still holds
for one (`holds`: none once it has left).

A participant that leaves is forgotten everywhere: its acks owed, strikes, budget, requests
in flight, view and edits. A muted one cannot answer (LiveKit drops what it sends): it is
asked for nothing and hosts nothing while muted, and its requests, view and edits go. Either
way the memory its traffic made the steward hold is handed back to the system afterwards
(`steward.memory_release`).
"""

from __future__ import annotations

from typing import Protocol

from steward import memory_release
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.context.views import Views
from steward.room.inbound.abuse import AbuseGuard
from steward.room.inbound.budget import InboundBudget
from steward.room.inbound.stream_inbox import StreamInbox
from steward.room.inbound.user_edits import UserEdits
from steward.room.outbound.broadcaster import Broadcaster
from steward.room.participants import Participants


class Room(Protocol):
    """The parts of a room runtime that keep something per participant."""

    @property
    def mode(self) -> str: ...
    @property
    def participants(self) -> Participants: ...
    @property
    def broadcaster(self) -> Broadcaster: ...
    @property
    def abuse(self) -> AbuseGuard: ...
    @property
    def budget(self) -> InboundBudget: ...
    @property
    def snapshots(self) -> SnapshotFetcher: ...
    @property
    def inbox(self) -> StreamInbox: ...
    @property
    def views(self) -> Views: ...
    @property
    def user_edits(self) -> UserEdits: ...


class Departures:
    """Lets go of everything the room holds for a participant that leaves or is muted."""

    def __init__(self, room: Room) -> None:
        self._room = room

    def left(self, identity: str) -> None:
        room = self._room
        # Host mode: a leaving host's unacked envelopes go to the next host (elected next).
        leaving_host = room.mode == "host" and identity == room.participants.host
        room.broadcaster.forget(identity, keep_unacked=leaving_host)
        room.abuse.forget(identity)
        room.budget.forget(identity)
        self._drop_requests_and_views(identity)

    def muted(self, identity: str, for_s: float) -> None:
        member = self._room.participants.get(identity)
        if member is not None and member.has("context"):
            self._room.participants.demote(identity, for_s)
        self._drop_requests_and_views(identity)

    def _drop_requests_and_views(self, identity: str) -> None:
        self._room.snapshots.participant_left(identity)
        self._room.views.forget(identity)
        self._room.user_edits.forget(identity)
        memory_release.release_soon()  # what it sent (a flood, a bomb) is freed by now

    def holds(self, identity: str) -> list[str]:
        """Where the room still keeps something for `identity`."""
        room = self._room
        places = {
            "member": room.participants.get(identity) is not None,
            "budget": identity in room.budget,
            "strikes": room.abuse.strikes(identity) > 0 or identity in room.abuse.muted,
            "view": room.views.get(identity) is not None,
            "context": room.snapshots.holds(identity) or room.inbox.holds(identity),
        }
        return [name for name, held in places.items() if held]
