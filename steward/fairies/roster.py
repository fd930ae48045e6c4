"""The fairies of one room (at most 10): id, name, colour, role, mode and position, and
their presence message for the browsers (`agent:fairies`)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from steward.actions.mistakes import FairyMistake
from steward.fairies.modes import ModeName, Role
from steward.protocol.box import Box
from steward.protocol.limits import MAX_FAIRIES_PER_ROOM
from steward.protocol.messages import FairiesMessage, FairyPresence, Point

# Names and colours handed out in order to fairies created without one.
DEFAULT_NAMES = (
    "Bramble",
    "Clover",
    "Fennel",
    "Juniper",
    "Moss",
    "Nettle",
    "Pip",
    "Sorrel",
    "Thistle",
    "Wren",
)
# One character per default name, so fairies of one room do not all sound alike; a fairy
# created with a name of its own gets the one at its position in the room.
DEFAULT_PERSONALITIES = (
    "steady and practical; plans before drawing and explains in plain words",
    "cheerful and encouraging; keeps messages warm and short",
    "precise and tidy; lines things up and counts what it made",
    "calm and thorough; checks its work and says plainly what it could not do",
    "quiet and patient; says little and lets the drawing speak",
    "brisk and direct; gets to the point without pleasantries",
    "playful and quick; likes bold colours and a touch of humour",
    "curious and careful; works out what the asker meant before acting",
    "sharp-eyed; spots overlaps and loose ends and fixes them",
    "a light-hearted storyteller; describes its work vividly but briefly",
)
DEFAULT_COLORS = (
    "violet",
    "green",
    "orange",
    "blue",
    "red",
    "yellow",
    "light-violet",
    "light-green",
    "light-blue",
    "light-red",
)


def default_personality(position: int) -> str:
    """The personality of the room's fairy at `position` (0-based) when it was given none."""
    return DEFAULT_PERSONALITIES[position % len(DEFAULT_PERSONALITIES)]


Publish = Callable[[FairiesMessage], Awaitable[None]]


@dataclass(frozen=True)
class Fairy:
    """One fairy of a room as the browsers see it: name, colour, role, mode, position, personality
    and task area."""

    id: str
    name: str
    color: str
    role: Role = "solo"
    mode: ModeName = "idling"
    x: float = 0.0
    y: float = 0.0
    personality: str = ""
    task_bounds: Box | None = None

    def presence(self) -> FairyPresence:
        return FairyPresence(
            id=self.id,
            name=self.name,
            color=self.color,
            mode=self.mode,
            position=Point(x=self.x, y=self.y),
            task_bounds=self.task_bounds,
        )


@dataclass
class Roster:
    """The fairies of one room by id, and the publisher that tells the browsers when they change."""

    fairies: dict[str, Fairy] = field(default_factory=dict)
    publish: Publish | None = None

    def add(
        self,
        fairy_id: str,
        *,
        name: str | None = None,
        color: str | None = None,
        role: Role = "solo",
        personality: str = "",
    ) -> Fairy:
        if fairy_id in self.fairies:
            return self.fairies[fairy_id]
        if len(self.fairies) >= MAX_FAIRIES_PER_ROOM:
            raise FairyMistake(f"A room has at most {MAX_FAIRIES_PER_ROOM} fairies.")
        n = len(self.fairies)
        fairy = Fairy(
            id=fairy_id,
            name=name or DEFAULT_NAMES[n % len(DEFAULT_NAMES)],
            color=color or DEFAULT_COLORS[n % len(DEFAULT_COLORS)],
            role=role,
            personality=personality or default_personality(n),
            x=100.0 + 60.0 * n,
            y=60.0,
        )
        self.fairies[fairy_id] = fairy
        return fairy

    def get(self, fairy_id: str) -> Fairy:
        if fairy_id not in self.fairies:
            raise FairyMistake(f'There is no fairy "{fairy_id}" in this room.')
        return self.fairies[fairy_id]

    def update(self, fairy_id: str, **changes: object) -> Fairy:
        fairy = replace(self.get(fairy_id), **changes)  # type: ignore[arg-type]
        self.fairies[fairy_id] = fairy
        return fairy

    def fly_to(self, fairy_id: str, area: Box) -> Fairy:
        return self.update(fairy_id, x=area.mid_x, y=area.mid_y)

    def message(self, now: float | None = None) -> FairiesMessage:
        return FairiesMessage(
            fairies=[f.presence() for f in self.fairies.values()],
            ts=time.time() if now is None else now,
        )

    async def announce(self) -> None:
        if self.publish is not None:
            await self.publish(self.message())
