"""Flooding participants in their own process (`steward_tools.rigs.participant`), for
`steward bench abuse`.

The abuse bench's steward runs in the bench's process; a flooder there would put its own
SDK's send buffers and its CPU (chunking megabytes into FFI requests on the same event loop)
into the steward's figures. Here each flooder is a plain `rtc.Room` in a child process: the
parent writes one JSON line (`url` and the `floods`: identity, token, topic, count, size,
stream or packets), the child joins them all and says it is ready, waits for `go` on stdin,
floods until each sender sees its `can_publish_data` revoked, and prints one JSON line: what
each sent before the mute and this process's own RSS growth in MB. The flooders stay in the
room until stdin closes (the steward forgets a participant's mute when it leaves).
Usage: `python -m steward_tools.rigs.flooder` (the spec on stdin).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from livekit import rtc

from steward.access import mint_token
from steward_tools.rigs.participant import READY, ParticipantProcess, next_line, run_child, say

SEND_TIMEOUT_S = 20.0


def flood(
    key: str,
    secret: str,
    *,
    room: str,
    identity: str,
    topic: str,
    count: int,
    size: int,
    stream: bool,
    spread: int = 0,
) -> dict[str, Any]:
    """One flooder's part of the spec: a participant with no rights sending `count` streams
    (or reliable packets) of `size` bytes on `topic`. With `spread`, the streams go out
    `SPREAD_AT_ONCE` at a time over `spread` topics (`topic:0`, `topic:1`, ...), in turn a
    byte stream written chunk by chunk with no announced size, a text stream likewise, a
    byte stream announcing 1 byte and a whole announced one, with a packet between them."""
    token = mint_token(key, secret, room=room, identity=identity, capabilities=(), can_prompt=False)
    return {
        "identity": identity,
        "token": token,
        "topic": topic,
        "count": count,
        "size": size,
        "stream": stream,
        "spread": spread,
    }


def _muted(room: rtc.Room) -> bool:
    return room.local_participant.permissions.can_publish_data is False


# Streams a spreading flooder keeps open at once, and the chunk it writes them in.
SPREAD_AT_ONCE = 8
SPREAD_CHUNK = 15_000


async def _spread_one(
    lp: rtc.LocalParticipant, to: list[str], topic: str, size: int, i: int
) -> None:
    """One stream of a spreading flood (its kind picked by `i`), then one packet."""
    kind = i % 4
    if kind == 3:
        await lp.send_bytes(b"\3" * size, topic=topic, destination_identities=to, compress=False)
    elif kind == 1:
        text = await lp.stream_text(topic=topic, destination_identities=to)
        for at in range(0, size, SPREAD_CHUNK):
            await text.write("t" * min(SPREAD_CHUNK, size - at))
        await text.aclose()
    else:  # no announced size, or 1 byte announced and `size` sent
        data = await lp.stream_bytes(
            "x.bin", topic=topic, destination_identities=to, total_size=1 if kind == 2 else None
        )
        for at in range(0, size, SPREAD_CHUNK):
            await data.write(b"\2" * min(SPREAD_CHUNK, size - at))
        await data.aclose()
    await lp.publish_data(b"\4" * 2000, topic=topic, reliable=True, destination_identities=to)


async def _spread(room: rtc.Room, to: str, flood: dict[str, Any]) -> int:
    """`count` streams over `spread` topics, `SPREAD_AT_ONCE` at a time, until muted."""
    lp, size, spread = room.local_participant, int(flood["size"]), int(flood["spread"])
    sent = 0
    started = 0
    running: set[asyncio.Task[None]] = set()
    while started < int(flood["count"]) and not _muted(room):
        while len(running) < SPREAD_AT_ONCE and started < int(flood["count"]):
            topic = f"{flood['topic']}:{started % spread}"
            coro = _spread_one(lp, [to], topic, size, started)
            running.add(asyncio.ensure_future(asyncio.wait_for(coro, SEND_TIMEOUT_S)))
            started += 1
        done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        sent += sum(1 for t in done if not t.cancelled() and t.exception() is None)
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    return sent


async def _flood(room: rtc.Room, to: str, flood: dict[str, Any]) -> int:
    """`count` streams (or reliable packets) of `size` bytes until muted; how many left."""
    if flood.get("spread"):
        return await _spread(room, to, flood)
    lp = room.local_participant
    blob = b"\1" * int(flood["size"])
    topic = str(flood["topic"])
    sent = 0
    for _ in range(int(flood["count"])):
        if _muted(room):
            break
        # Muted mid-send, or LiveKit pushing back: the flood goes on until the mute is seen.
        with contextlib.suppress(Exception):
            async with asyncio.timeout(SEND_TIMEOUT_S):
                if flood["stream"]:
                    await lp.send_bytes(blob, topic=topic, destination_identities=[to])
                else:
                    await lp.publish_data(
                        blob, topic=topic, reliable=True, destination_identities=[to]
                    )
                sent += 1
    return sent


async def main(spec: dict[str, Any]) -> None:
    from steward_tools.process_usage import self_rss_mb

    rooms: dict[str, rtc.Room] = {}
    try:
        for flood in spec["floods"]:
            room = rtc.Room()
            await room.connect(spec["url"], flood["token"])
            rooms[flood["identity"]] = room
        say(READY)
        if await next_line() != "go":
            return
        before = self_rss_mb(trim=True)
        sent = await asyncio.gather(
            *(_flood(rooms[f["identity"]], spec["to"], f) for f in spec["floods"])
        )
        say(
            {
                "sent": {f["identity"]: n for f, n in zip(spec["floods"], sent, strict=True)},
                "rss_mb_growth": round(self_rss_mb(trim=True) - before, 1),
            }
        )
        await next_line()  # until the parent closes stdin
    finally:
        for room in rooms.values():
            with contextlib.suppress(Exception):
                await room.disconnect()


class Flooders:
    """The parent's side: the child process, started and joined, flooding on `go()`."""

    def __init__(self, child: ParticipantProcess) -> None:
        self.child = child

    @classmethod
    async def start(cls, url: str, to: str, floods: list[dict[str, Any]]) -> Flooders:
        spec = {"url": url, "to": to, "floods": floods}
        child = await ParticipantProcess.start(
            "steward_tools.rigs.flooder", spec, timeout=60, what="the flooders", quiet=True
        )
        return cls(child)

    async def go(self) -> None:
        await self.child.send("go")

    async def result(self, timeout: float = 120) -> dict[str, Any]:
        """What the child printed once every flooder was muted or done."""
        return await self.child.read(timeout, "the flood")

    async def close(self) -> None:
        """Closing stdin makes the flooders leave; killed if they have not within 10 s."""
        await self.child.close(10)


if __name__ == "__main__":
    run_child(main)
