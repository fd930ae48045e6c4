"""Routing of livekit rtc's native (FFI) events without the SDK's per-call fan-out.

The Python SDK (1.1.x) hands every native event to every subscriber: each `Room`'s listener
and each in-flight `publish_data` / `perform_rpc` waiter is woken for every event of every
room in the process. With many rooms, or many envelopes in flight, that is O(subscribers)
task wake-ups per event and it is what saturated one process at 50-100 rooms. Here:

- `narrow_room_events(room)` restricts a connected room's listener to its own events;
- `publish(...)` and `perform_rpc(...)` issue the same FFI requests as the SDK, but their
  callbacks are matched by `async_id` through one dictionary per event loop. `publish`
  issues the request synchronously and returns a future, so a caller can keep envelopes in
  order without waiting for each one's completion.

Both use the SDK's FFI request/event messages (pinned SDK version); when the SDK's internals
differ from what is expected, `narrow_room_events` leaves the room as it is and logs why.
"""

from __future__ import annotations

import asyncio
import ctypes
from dataclasses import dataclass, field
from typing import Any

from livekit import rtc
from livekit.rtc._ffi_client import FfiClient
from livekit.rtc._proto import ffi_pb2 as proto_ffi

from steward.obs.logging import get_logger

log = get_logger(__name__)

_CALLBACKS = ("publish_data", "perform_rpc")
# What a room's listener needs besides its own room events: RPC invocations for its local
# participant, and the track (un)publish callbacks it forwards to the SDK's waiters.
_FORWARDED = ("publish_track", "unpublish_track")


def narrow_room_events(room: rtc.Room) -> bool:
    """Deliver only this room's events to its listener; True when the filter is in place."""
    queue = getattr(room, "_ffi_queue", None)
    ffi = FfiClient.instance.queue
    subscribers = getattr(ffi, "_subscribers", None)
    try:
        room_handle = room._ffi_handle.handle  # type: ignore[union-attr]
        lp_handle = room.local_participant._ffi_handle.handle
    except AttributeError:
        room_handle = lp_handle = None
    if queue is None or not isinstance(subscribers, list) or room_handle is None:
        log.warning("ffi_filter_unavailable", reason="unexpected SDK internals")
        return False

    def mine(event: proto_ffi.FfiEvent) -> bool:
        which = event.WhichOneof("message")
        if which == "room_event":
            return bool(event.room_event.room_handle == room_handle)
        if which == "rpc_method_invocation":
            return bool(event.rpc_method_invocation.local_participant_handle == lp_handle)
        return which in _FORWARDED

    with ffi._lock:
        for i, entry in enumerate(subscribers):
            if entry[0] is queue:
                subscribers[i] = (entry[0], entry[1], mine)
                return True
    log.warning("ffi_filter_unavailable", reason="room listener not subscribed")
    return False


@dataclass
class _Router:
    """One subscription per event loop; callbacks resolve futures by (kind, async_id)."""

    loop: asyncio.AbstractEventLoop
    waiting: dict[tuple[str, int], tuple[asyncio.Future[Any], Any]] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None

    def start(self) -> None:
        queue = FfiClient.instance.queue.subscribe(
            self.loop, filter_fn=lambda e: e.WhichOneof("message") in _CALLBACKS
        )
        self.task = self.loop.create_task(self._run(queue), name="ffi-router")

    async def _run(self, queue: Any) -> None:
        try:
            while True:
                event = await queue.get()
                which = event.WhichOneof("message")
                entry = self.waiting.pop((which, getattr(event, which).async_id), None)
                if entry is not None and not entry[0].done():
                    entry[0].set_result(getattr(event, which))
        finally:
            FfiClient.instance.queue.unsubscribe(queue)

    def expect(self, kind: str, async_id: int, keep: Any = None) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = self.loop.create_future()
        # `keep` holds the request's native buffer until the callback says it was sent.
        self.waiting[(kind, async_id)] = (fut, keep)
        fut.add_done_callback(lambda _: self.waiting.pop((kind, async_id), None))
        return fut


_routers: dict[asyncio.AbstractEventLoop, _Router] = {}


def _router() -> _Router:
    loop = asyncio.get_running_loop()
    router = _routers.get(loop)
    if router is None or router.task is None or router.task.done():
        for old in [lp for lp in _routers if lp.is_closed()]:
            del _routers[old]
        router = _routers[loop] = _Router(loop)
        router.start()
    return router


def publish(
    participant: rtc.LocalParticipant,
    payload: bytes,
    *,
    topic: str,
    destinations: list[str] | None = None,
    reliable: bool = True,
) -> asyncio.Future[None]:
    """Issue a data packet now (in call order) and return a future for its completion."""
    router = _router()
    buf = ctypes.create_string_buffer(payload, len(payload))
    req = proto_ffi.FfiRequest()
    req.publish_data.local_participant_handle = participant._ffi_handle.handle
    req.publish_data.data_ptr = ctypes.addressof(buf)
    req.publish_data.data_len = len(payload)
    req.publish_data.reliable = reliable
    req.publish_data.topic = topic
    req.publish_data.destination_identities.extend(destinations or [])
    resp = FfiClient.instance.request(req)
    callback = router.expect("publish_data", resp.publish_data.async_id, buf)
    done: asyncio.Future[None] = router.loop.create_future()

    def finish(cb: asyncio.Future[Any]) -> None:
        if done.done():
            return
        if cb.cancelled():
            done.cancel()
        elif cb.result().error:
            done.set_exception(rtc.participant.PublishDataError(cb.result().error))
        else:
            done.set_result(None)

    callback.add_done_callback(finish)
    return done


async def perform_rpc(
    participant: rtc.LocalParticipant,
    *,
    destination_identity: str,
    method: str,
    payload: str,
    response_timeout: float | None = None,
) -> str:
    """`LocalParticipant.perform_rpc` without the per-call subscription (no interceptors)."""
    router = _router()
    req = proto_ffi.FfiRequest()
    req.perform_rpc.local_participant_handle = participant._ffi_handle.handle
    req.perform_rpc.destination_identity = destination_identity
    req.perform_rpc.method = method
    req.perform_rpc.payload = payload
    if response_timeout is not None:
        req.perform_rpc.response_timeout_ms = int(response_timeout * 1000)
    resp = FfiClient.instance.request(req)
    cb = await router.expect("perform_rpc", resp.perform_rpc.async_id)
    if cb.HasField("error"):
        raise rtc.RpcError._from_proto(cb.error)
    return str(cb.payload)
