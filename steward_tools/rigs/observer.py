"""A hidden watcher of the steward's `ready` attribute, in a process of its own
(`steward_tools.rigs.participant`): `python -m steward_tools.rigs.observer`.

The failover bench's clients share one process, and under CPU load their SDK may learn of a
new steward seconds after LiveKit announced it. This process joins every room as a hidden,
subscribe-only participant that carries no data traffic of its own, so when it saw a steward
ready is when LiveKit told a participant that was not busy.

Reads one JSON spec on stdin (`url`, `key`, `secret`, `steward`, `rooms`), prints
`{"event": "ready"}` once connected, then one line per sighting of the steward identity with
a `ready` attribute: `{"room", "sid", "t"}` (wall clock). Ends when stdin closes.
"""

from __future__ import annotations

import time
from typing import Any

from livekit import api, rtc

from steward.protocol.names import ATTR_READY
from steward_tools.rigs.participant import READY, next_line, run_child, say

IDENTITY = "bench-observer"


def _token(spec: dict[str, Any], room: str) -> str:
    grants = api.VideoGrants(
        room_join=True,
        room=room,
        can_publish=False,
        can_publish_data=False,
        can_subscribe=True,
        hidden=True,
    )
    return (
        api.AccessToken(spec["key"], spec["secret"])
        .with_identity(IDENTITY)
        .with_grants(grants)
        .to_jwt()
    )


async def _watch(spec: dict[str, Any], name: str) -> rtc.Room:
    room = rtc.Room()

    def seen(p: rtc.RemoteParticipant) -> None:
        if p.identity == spec["steward"] and p.attributes.get(ATTR_READY):
            say({"room": name, "sid": p.sid, "t": time.time()})

    room.on("participant_connected", seen)
    room.on("participant_attributes_changed", lambda _changed, p: seen(p))
    await room.connect(spec["url"], _token(spec, name), rtc.RoomOptions(auto_subscribe=False))
    for p in room.remote_participants.values():
        seen(p)
    return room


async def main(spec: dict[str, Any]) -> None:
    rooms = [await _watch(spec, name) for name in spec["rooms"]]
    say(READY)
    while await next_line():  # until the bench closes our stdin
        pass
    for room in rooms:
        await room.disconnect()


if __name__ == "__main__":
    run_child(main)
