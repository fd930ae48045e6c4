"""A participant in its own process that sends one SDK-compressed byte stream of zeros.

`steward bench abuse` measures the steward's RSS while this arrives; sending from the bench's
own process would put the sender's copies of the buffer into the same RSS figure.
Usage: `python -m steward_tools.bench.stream_sender URL TOKEN TO TOPIC MIB`.
"""

from __future__ import annotations

import asyncio
import sys

from livekit import rtc

from steward.native_exit import exit_skipping_native_teardown


async def send(url: str, token: str, to: str, topic: str, mib: int) -> str:
    room = rtc.Room()
    await room.connect(url, token)
    try:
        await room.local_participant.send_bytes(
            bytes(mib << 20), topic=topic, destination_identities=[to], compress=True
        )
        return "sent"
    except Exception as err:  # the steward may cut us off: report it, it is the point
        return f"stopped: {err!r}"[:200]
    finally:
        await room.disconnect()


def main(argv: list[str]) -> int:
    url, token, to, topic, mib = argv
    print(asyncio.run(send(url, token, to, topic, int(mib))), flush=True)
    return 0


if __name__ == "__main__":
    exit_skipping_native_teardown(main(sys.argv[1:]))
