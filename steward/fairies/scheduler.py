"""The scheduler port: what a fairy's request, the effects of its actions and a resume ask of
whatever schedules the room's fairies (`FairyRuntime` implements it). They queue work, switch
modes, interrupt and wake through it, and never reach into the runtime itself.
"""

from __future__ import annotations

from typing import Protocol

from steward.fairies.interrupts import Interrupt
from steward.fairies.modes import ModeName
from steward.fairies.room_fairies import RoomFairies


class Scheduler(Protocol):
    """The port fairy logic queues work, switches modes, interrupts and wakes fairies through."""

    async def submit(self, room: RoomFairies, fairy_id: str, text: str, origin: str) -> None:
        """Queue a request for the fairy (`origin`: user, system, self, wake)."""

    async def feed_back(self, room: RoomFairies, fairy_id: str, text: str) -> None:
        """Queue feedback for the fairy (capped: a model repeating its mistake stops getting
        it)."""

    async def set_mode(self, room: RoomFairies, fairy_id: str, new: ModeName) -> None:
        """Switch the fairy's mode, running the modes' hooks and waking who waits on it."""

    async def interrupt(self, room: RoomFairies, fairy_id: str, interrupt: Interrupt) -> str | None:
        """Cancel, switch or schedule, as the system or another fairy; returns a refusal."""

    async def notify(self, room: RoomFairies, key: str) -> None:
        """Wake whoever waits on `key`."""
