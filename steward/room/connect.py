"""Joining a room as the steward: its token, its connection options, and `steward join ROOM`'s
direct connect (the worker's jobs get their room connected by livekit-agents, with the same
options, and hand it to `RoomRuntime` the same way)."""

from __future__ import annotations

from livekit import rtc

from steward.access import mint_token
from steward.config import Settings
from steward.room.deps import RoomDeps
from steward.room.inbound.stream_inbox import STREAM_CAPS
from steward.room.runtime import RoomRuntime


def room_options(*, auto_subscribe: bool) -> rtc.RoomOptions:
    """Every steward connection's options (direct and worker alike)."""
    # The Rust core inflates SDK-compressed streams before we see a byte: bound it there too.
    limit = rtc.DataStreamOptions(max_payload_byte_length=max(STREAM_CAPS.values()))
    return rtc.RoomOptions(auto_subscribe=auto_subscribe, data_stream=limit)


def steward_token(settings: Settings, room: str) -> str:
    """The steward joins as a visible participant of kind agent (never hidden: RPC needs it)."""
    return mint_token(
        settings.livekit_api_key,
        settings.livekit_api_secret.get_secret_value(),
        room=room,
        identity=settings.steward_identity,
        name="Canvas Steward",
        kind="agent",
        role="steward",
        can_prompt=False,
    )


async def connect_direct(
    settings: Settings, room_name: str, deps: RoomDeps, *, fence: int | None = None
) -> RoomRuntime:
    """`steward join ROOM`: connect with our own token, then the common path."""
    room = rtc.Room()
    token = steward_token(settings, room_name)
    await room.connect(settings.livekit_url, token, room_options(auto_subscribe=True))
    try:
        return await RoomRuntime(room, room_name, deps, fence=fence).start()
    except BaseException:
        await room.disconnect()
        raise
