"""What stands in the room, as a tab catches up: a join always sends the crew and the project
cards (it may arrive before the tab listens, or before the fairies were announced), and the
tab's whole-room resync then gets them too; repeated resyncs are throttled per tab."""

from __future__ import annotations

from typing import Any, cast

from steward.protocol.messages import FairiesMessage, FairyPresence, Point
from steward.protocol.names import TOPIC_FAIRIES
from steward.room.outbound.messenger import Messenger
from steward.room.outbound.standing import CATCH_UP_EVERY_S, Standing


class _Sent:
    def __init__(self) -> None:
        self.packets: list[tuple[str, list[str] | None]] = []

    async def publish(self, payload: bytes, topic: str, to: list[str] | None = None) -> None:
        self.packets.append((topic, to))


def _presence() -> FairiesMessage:
    fairy = FairyPresence(
        id="fairy-1", name="Bramble", color="violet", mode="idling", position=Point(x=0, y=0)
    )
    return FairiesMessage(fairies=[fairy], ts=1.0)


def _standing() -> tuple[Standing, _Sent, list[float]]:
    sent, now = _Sent(), [100.0]
    return Standing(cast(Messenger, cast(Any, sent)), clock=lambda: now[0]), sent, now


async def test_a_resync_right_after_a_join_still_gets_the_crew() -> None:
    standing, sent, _ = _standing()
    await standing.joined("ann")  # the fairies not announced yet: nothing to send
    assert sent.packets == []
    await standing.fairies(_presence())  # to everyone; ann's tab may not listen yet
    await standing.asked("ann")  # ann's tab listens now and asks for the whole room
    assert sent.packets == [(TOPIC_FAIRIES, None), (TOPIC_FAIRIES, ["ann"])]


async def test_resyncs_are_throttled_per_tab_joins_are_not() -> None:
    standing, sent, now = _standing()
    await standing.fairies(_presence())
    sent.packets.clear()
    await standing.asked("ann")
    await standing.asked("ann")  # within CATCH_UP_EVERY_S: dropped
    await standing.asked("bob")
    await standing.joined("ann")
    assert sent.packets == [
        (TOPIC_FAIRIES, ["ann"]),
        (TOPIC_FAIRIES, ["bob"]),
        (TOPIC_FAIRIES, ["ann"]),
    ]
    now[0] += CATCH_UP_EVERY_S
    await standing.asked("ann")
    assert sent.packets[-1] == (TOPIC_FAIRIES, ["ann"]) and len(sent.packets) == 4
