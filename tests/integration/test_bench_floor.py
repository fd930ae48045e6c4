"""`bench scale`'s raw CPU floor over a real livekit-server: echoed probes, counted."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from livekit import rtc

from steward_tools.bench.raw import cpu_floor
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.clients import TimedClient
from tests.conftest import wait_for

pytestmark = pytest.mark.integration


async def test_every_probe_of_the_floor_is_echoed_by_every_client(
    livekit_server: LiveKitServer, token_for: Callable[..., str], room_name: str
) -> None:
    sender = rtc.Room()
    await sender.connect(livekit_server.url, token_for(room_name, "sender"))
    clients = [
        TimedClient.create(
            livekit_server.url,
            livekit_server.api_key,
            livekit_server.api_secret,
            room=room_name,
            identity=f"c{i}",
            steward_identity="sender",
        )
        for i in range(2)
    ]
    try:
        for c in clients:
            await c.connect()
        await wait_for(lambda: {"c0", "c1"} <= set(sender.remote_participants))
        floor = await cpu_floor([(sender, ["c0", "c1"])], probes=5, every_s=0.05, timeout_s=20)
        assert floor["raw_probes_sent"] == 5
        assert floor["raw_echoes"] == floor["raw_echoes_wanted"] == 10
        assert floor["raw_cpu_ms_per_packet"] is not None and floor["raw_cpu_ms_per_packet"] > 0
        assert all(len(c.raw_at) == 5 for c in clients)  # each client saw every probe
    finally:
        for c in clients:
            await c.disconnect()
        await sender.disconnect()
