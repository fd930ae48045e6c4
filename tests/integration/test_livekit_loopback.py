"""Two Python participants exchange protocol messages over a real livekit-server."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable

import pytest
from livekit import rtc

from steward.protocol import (
    RPC_PROMPT,
    STREAM_ATTR_REQUEST_ID,
    TOPIC_ACTION,
    TOPIC_SCREENSHOT,
    ActionEnvelope,
    PromptReply,
    PromptRequest,
    ProtocolError,
    WireAction,
    decode,
)
from steward.protocol.limits import MAX_DATA_PACKET_BYTES, MAX_RPC_PAYLOAD_BYTES
from steward_tools import livekit_server as livekit_server_module
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
async def pair(
    livekit_server: LiveKitServer, token_for: Callable[..., str], room_name: str
) -> AsyncIterator[tuple[rtc.Room, rtc.Room]]:
    a, b = rtc.Room(), rtc.Room()
    await a.connect(livekit_server.url, token_for(room_name, "alice"))
    await b.connect(livekit_server.url, token_for(room_name, "bob"))
    await wait_for(lambda: "bob" in a.remote_participants and "alice" in b.remote_participants)
    yield a, b
    await a.disconnect()
    await b.disconnect()


async def test_data_packet_carries_an_envelope(pair: tuple[rtc.Room, rtc.Room]) -> None:
    a, b = pair
    got: asyncio.Future[tuple[bytes, str, str]] = asyncio.get_running_loop().create_future()

    def on_data(p: rtc.DataPacket) -> None:
        if not got.done() and p.participant is not None:
            got.set_result((p.data, p.topic or "", p.participant.identity))

    b.on("data_received", on_data)
    env = ActionEnvelope(
        session_id="s1",
        seq=1,
        actions=[WireAction(id="a1", name="create_shape", params={"type": "geo", "x": 1})],
        ts=1.0,
    )
    await a.local_participant.publish_data(env.to_wire(), reliable=True, topic=TOPIC_ACTION)
    data, topic, sender = await asyncio.wait_for(got, 10)
    assert topic == TOPIC_ACTION
    assert sender == "alice"  # the sender is the packet's identity, not a payload field
    decoded = decode(ActionEnvelope, data, topic=topic, max_bytes=MAX_DATA_PACKET_BYTES)
    assert decoded == env


async def test_rpc_round_trip_and_clear_error(pair: tuple[rtc.Room, rtc.Room]) -> None:
    a, b = pair

    async def on_prompt(inv: rtc.RpcInvocationData) -> str:
        req = decode(PromptRequest, inv.payload, topic=RPC_PROMPT, max_bytes=MAX_RPC_PAYLOAD_BYTES)
        if isinstance(req, ProtocolError):
            return PromptReply(error=str(req)).to_wire().decode()
        return (
            PromptReply(session_id=f"{inv.caller_identity}:{len(req.message)}").to_wire().decode()
        )

    b.local_participant.register_rpc_method(RPC_PROMPT, on_prompt)
    ok = await a.local_participant.perform_rpc(
        destination_identity="bob",
        method=RPC_PROMPT,
        payload=PromptRequest(message="draw a cat").to_wire().decode(),
    )
    assert PromptReply.model_validate_json(ok).session_id == "alice:10"
    bad = await a.local_participant.perform_rpc(
        destination_identity="bob", method=RPC_PROMPT, payload='{"message": ""}'
    )
    err = PromptReply.model_validate_json(bad).error
    assert err is not None and "message" in err


async def test_300kb_byte_stream_with_request_id(pair: tuple[rtc.Room, rtc.Room]) -> None:
    a, b = pair
    blob = os.urandom(300_000)
    done: asyncio.Future[tuple[bytes, dict[str, str], str, str]] = (
        asyncio.get_running_loop().create_future()
    )

    tasks: set[asyncio.Future[None]] = set()

    def on_stream(reader: rtc.ByteStreamReader, identity: str) -> None:
        async def read() -> None:
            buf = bytearray()
            async for chunk in reader:
                buf += chunk
            info = reader.info
            done.set_result((bytes(buf), dict(info.attributes or {}), identity, info.mime_type))

        tasks.add(asyncio.ensure_future(read()))

    b.register_byte_stream_handler(TOPIC_SCREENSHOT, on_stream)
    writer = await a.local_participant.stream_bytes(
        "shot.webp",
        topic=TOPIC_SCREENSHOT,
        attributes={STREAM_ATTR_REQUEST_ID: "req-1"},
        destination_identities=["bob"],
        mime_type="image/webp",
    )
    for i in range(0, len(blob), 32_000):
        await writer.write(blob[i : i + 32_000])
    await writer.aclose()
    data, attrs, sender, mime_type = await asyncio.wait_for(done, 15)
    assert hashlib.sha256(data).digest() == hashlib.sha256(blob).digest()
    assert attrs[STREAM_ATTR_REQUEST_ID] == "req-1"
    assert sender == "alice"
    assert mime_type == "image/webp"  # the steward types the screenshot from this


async def test_native_log_records_stay_native_unless_captured(
    pair: tuple[rtc.Room, rtc.Room], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With capture on (the SDK's default) native debug records cross the FFI with every
    packet; after `set_native_log_capture(False)` none reach Python, and packets still flow.

    The native side ships its records in batches on a timer of its own, and nothing crosses
    while capture is off to say that timer has ticked: the quiet window is measured in the
    batch gaps seen with capture on (a loaded machine's slower ticks widen it), not fixed."""
    import livekit.rtc._ffi_client as ffi_client

    from steward import ffi_router

    crossed: list[int] = []
    batches: list[float] = []  # when each batch of records crossed (one FFI event each)
    last_event: list[object] = [None]
    level_of = ffi_client.to_python_level

    def count(level: int) -> int | None:
        crossed.append(level)
        event = sys._getframe(1).f_locals.get("event")  # the batch being read (FFI thread)
        if event is not last_event[0]:
            last_event[0] = event
            batches.append(time.monotonic())
        return level_of(level)

    monkeypatch.setattr(ffi_client, "to_python_level", count)
    a, b = pair
    got: list[bytes] = []
    b.on("data_received", lambda p: got.append(p.data))

    async def exchange(n: int) -> None:
        start = len(got)
        for i in range(n):
            await ffi_router.publish(a.local_participant, b"x%d" % i, topic="t")
        await wait_for(lambda: len(got) == start + n)

    try:
        ffi_router.set_native_log_capture(True)
        await wait_for(lambda: len(batches) >= 4, timeout=30)  # the batches' own rhythm
        crossed.clear()
        await exchange(30)
        await wait_for(lambda: len(crossed) >= 30)  # debug records of the packets, dropped
        gaps = [later - earlier for earlier, later in itertools.pairwise(batches)]
        quiet_s = min(max(3 * max(gaps), 3.0), 20.0)
        ffi_router.set_native_log_capture(False)
        switched, before = time.monotonic(), len(batches)
        await exchange(30)
        await asyncio.sleep(max(0.0, switched + quiet_s - time.monotonic()))
        # At most the batch the native side had formed before the switch; capture left on
        # would have shipped one on every tick of the window.
        assert len(batches) - before <= 1, (len(batches) - before, quiet_s)
        assert os.environ.get("RUST_LOG")  # Rust's own logger filters (warn unless set)
    finally:
        ffi_router.set_native_log_capture(False)


async def test_narrowed_rooms_are_routed_by_handle_from_one_entry(
    livekit_server: LiveKitServer, token_for: Callable[..., str], room_name: str
) -> None:
    """Each narrowed room leaves the SDK's subscriber list for one routing entry; its data
    and RPCs still reach it (and only it), and its route goes when it disconnects."""
    from steward import ffi_router

    routed = ffi_router.routed_rooms()
    pairs: list[tuple[rtc.Room, rtc.Room]] = []
    try:
        for i in range(3):
            a, b = rtc.Room(), rtc.Room()
            await a.connect(livekit_server.url, token_for(f"{room_name}-{i}", "alice"))
            await b.connect(livekit_server.url, token_for(f"{room_name}-{i}", "bob"))
            pairs.append((a, b))
        listed = ffi_router.sdk_subscribers()
        for a, b in pairs:
            assert ffi_router.narrow_room_events(a) and ffi_router.narrow_room_events(b)
        assert (
            ffi_router.sdk_subscribers() <= listed - 6 + 1
        )  # six listeners out, at most one entry in
        assert ffi_router.routed_rooms() == routed + 6
        got: list[list[bytes]] = [[] for _ in pairs]
        for i, (a, b) in enumerate(pairs):
            b.on("data_received", lambda p, i=i: got[i].append(p.data))
            b.local_participant.register_rpc_method("echo", lambda d: d.payload)
            await wait_for(lambda a=a: "bob" in a.remote_participants)
        for i, (a, _) in enumerate(pairs):
            await ffi_router.publish(a.local_participant, b"to %d" % i, topic="t")
            reply = await ffi_router.perform_rpc(
                a.local_participant, destination_identity="bob", method="echo", payload=f"r{i}"
            )
            assert reply == f"r{i}"
        await wait_for(lambda: all(got))
        assert got == [[b"to 0"], [b"to 1"], [b"to 2"]]
    finally:
        for a, b in pairs:
            await a.disconnect()
            await b.disconnect()
    await wait_for(lambda: ffi_router.routed_rooms() == routed)


def test_a_port_taken_before_livekit_server_binds_it_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A free port can be taken between being found and being bound (any connection may
    get it as its local port): the server then starts on new ones instead of failing."""
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    taken.bind(("0.0.0.0", 0))
    taken.listen()
    busy = int(taken.getsockname()[1])
    picks: list[int] = []
    real = livekit_server_module.free_port

    def first_busy(kind: int = socket.SOCK_STREAM) -> int:
        port = busy if not picks and kind == socket.SOCK_STREAM else real(kind)
        picks.append(port)
        return port

    monkeypatch.setattr(livekit_server_module, "free_port", first_busy)
    server = LiveKitServer()
    try:
        server.start()
        # Three ports per attempt, at least twice: a port picked again can be taken by
        # another connection too, on a busy machine (seen once in CI: three attempts).
        assert picks[0] == busy and len(picks) >= 6 and len(picks) % 3 == 0
        assert busy not in (server.http_port, server.tcp_port)
        with socket.create_connection(("127.0.0.1", server.http_port), timeout=2):
            pass
    finally:
        server.stop()
        taken.close()
