"""Routing of livekit rtc's native (FFI) events without the SDK's per-call fan-out.

The Python SDK (1.1.x) hands every native event to every subscriber: each `Room`'s listener
and each in-flight `publish_data` / `perform_rpc` waiter is woken for every event of every
room in the process. With many rooms, or many envelopes in flight, that is O(subscribers)
task wake-ups per event and it is what saturated one process at 50-100 rooms. Here:

- `narrow_room_events(room)` takes a connected room's listener out of the SDK's subscriber
  list and routes its events to it by handle, from one entry for all rooms (O(1) per event
  instead of one filter call per room, which grew with the square of the rooms);
- `publish(...)` and `perform_rpc(...)` issue the same FFI requests as the SDK, but their
  callbacks are matched by `async_id` through one dictionary per event loop. `publish`
  issues the request synchronously and returns a future, so a caller can keep envelopes in
  order without waiting for each one's completion;
- `set_native_log_capture(False)` stops the SDK from shipping every native log record (debug
  ones included, about 3 per data packet and 13 per packet at 25 rooms) across the FFI only
  for Python to drop it: Rust's own logger filters them and writes what passes to stderr.

Both use the SDK's FFI request/event messages and private internals of the pinned SDK
(`livekit==1.1.21`): `FfiClient.instance` with its queue's `_subscribers` and `_lock`, a
room's `_ffi_queue` and `_ffi_handle`. `require_sdk_internals()` checks them at start-up
and fails naming the pinned version when an upgrade changed them; should one change for a
single room anyway, `narrow_room_events` leaves that room as it is and logs why.

What public API would replace this: a per-room event subscription in the SDK (events
filtered by room handle before they reach Python), and `publish_data` / `perform_rpc`
waiters resolved by `async_id` from one dictionary, as `livekit/python-sdks` could do
inside `FfiQueue`. With those, this module goes and callers use
`LocalParticipant.publish_data` / `perform_rpc` directly.
"""

from __future__ import annotations

import asyncio
import ctypes
import inspect
import os
import threading
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from livekit import rtc
from livekit.rtc import _ffi_client
from livekit.rtc._ffi_client import FfiClient, FfiQueue
from livekit.rtc._proto import ffi_pb2 as proto_ffi
from livekit.rtc.version import __version__ as sdk_version

from steward.obs import metrics
from steward.obs.logging import get_logger

log = get_logger(__name__)

_CALLBACKS = ("publish_data", "perform_rpc")
# What a room's listener needs besides its own room events: RPC invocations for its local
# participant, and the track (un)publish callbacks it forwards to the SDK's waiters.
_FORWARDED = ("publish_track", "unpublish_track")


# The SDK release whose internals this module was written against (pyproject pins it).
PINNED_SDK = "1.1.21"

# FFI messages and the fields of them this module reads or writes.
REQUEST_FIELDS = {
    "publish_data": (
        "local_participant_handle",
        "data_ptr",
        "data_len",
        "reliable",
        "topic",
        "destination_identities",
    ),
    "perform_rpc": (
        "local_participant_handle",
        "destination_identity",
        "method",
        "payload",
        "response_timeout_ms",
    ),
}
EVENT_FIELDS = {
    "publish_data": ("async_id", "error"),
    "perform_rpc": ("async_id", "payload", "error"),
    "room_event": ("room_handle",),
    "rpc_method_invocation": ("local_participant_handle",),
    "publish_track": (),
    "unpublish_track": (),
}


class SdkInternalsChanged(RuntimeError):
    """The installed livekit SDK lacks internals this module relies on."""


def sdk_internals_problems() -> list[str]:
    """What differs from the pinned SDK's internals (empty when all is as expected)."""
    problems: list[str] = []
    for message, fields in (
        (proto_ffi.FfiRequest, REQUEST_FIELDS),
        (proto_ffi.FfiEvent, EVENT_FIELDS),
    ):
        known = message.DESCRIPTOR.fields_by_name
        for name, wanted in fields.items():
            if name not in known:
                problems.append(f"{message.__name__}.{name} is missing")
                continue
            inner_type = known[name].message_type
            inner = inner_type.fields_by_name if inner_type is not None else {}
            missing = [f for f in wanted if f not in inner]
            problems += [f"{message.__name__}.{name}.{f} is missing" for f in missing]
    if not callable(getattr(FfiClient, "request", None)) or not hasattr(FfiClient, "queue"):
        problems.append("FfiClient.request / FfiClient.queue are missing")
    problems += _queue_problems()
    for what, source, attr in (
        ("Room.__init__", rtc.Room.__init__, "self._ffi_handle"),
        ("Room.connect", rtc.Room.connect, "self._ffi_queue"),
    ):
        if attr not in inspect.getsource(source):
            problems.append(f"{what} no longer sets {attr}")
    if "livekit_ffi_initialize" not in inspect.getsource(FfiClient.__init__) or not callable(
        getattr(_ffi_client, "ffi_event_callback", None)
    ):
        problems.append("FfiClient.__init__ no longer calls livekit_ffi_initialize(callback, …)")
    if not hasattr(rtc.participant, "PublishDataError"):
        problems.append("rtc.participant.PublishDataError is missing")
    if not callable(getattr(rtc.RpcError, "_from_proto", None)):
        problems.append("rtc.RpcError._from_proto is missing")
    return problems


def _queue_problems() -> list[str]:
    """A probe queue: subscribers must be a locked list of (queue, loop, filter) entries."""
    probe: Any = FfiQueue()
    if not hasattr(probe, "_lock") or not isinstance(getattr(probe, "_subscribers", None), list):
        return ["FfiQueue._lock / FfiQueue._subscribers are missing"]
    if "filter_fn" not in inspect.signature(probe.subscribe).parameters:
        return ["FfiQueue.subscribe takes no filter_fn"]
    loop = asyncio.new_event_loop()
    try:

        def keep(_: Any) -> bool:
            return True

        queue = probe.subscribe(loop, filter_fn=keep)
        entry = probe._subscribers[0]
        if not (isinstance(entry, tuple) and len(entry) == 3 and entry[0] is queue):
            return ["FfiQueue._subscribers entries are no longer (queue, loop, filter)"]
        probe.unsubscribe(queue)
    finally:
        loop.close()
    return []


def require_sdk_internals() -> None:
    """Fail at start-up, naming the versions, when the SDK's internals are not as expected."""
    problems = sdk_internals_problems()
    if problems:
        installed = metadata.version("livekit")
        log.error("sdk_internals_changed", installed=installed, pinned=PINNED_SDK)
        raise SdkInternalsChanged(
            f"steward.ffi_router was written against livekit=={PINNED_SDK} but livekit=="
            f"{installed} is installed and differs: {'; '.join(problems)}. "
            f"Reinstall livekit=={PINNED_SDK} (uv sync) or update steward/ffi_router.py."
        )


# What Rust's logger writes to stderr while records are not captured (RUST_LOG, when set, wins).
NATIVE_STDERR_LEVEL = "warn"
_native_capture: bool | None = None
# Process-wide set-up done by whichever job thread comes first (the capture flag, routers).
_setup_lock = threading.Lock()


def set_native_log_capture(capture: bool) -> None:
    """Choose where the native SDK's log records go; call before any room connects.

    The SDK initializes the FFI with capture on: every record (debug and trace included)
    is formatted, batched, serialized, sent across the FFI and parsed in Python, which then
    drops the debug ones. Measured here (2 participants per room, one process, quiet
    machine): 2.18 → 1.54 ms of CPU per packet sent and received at 25 rooms, the native
    runtime thread's share halved. With capture off, records at `RUST_LOG` (default warn) and
    above go to stderr in the Rust logger's own format, as the SDK's Python records already
    do. Re-initializing the FFI with the same callback only changes the capture flag."""
    global _native_capture
    with _setup_lock:  # a worker's jobs start in threads of their own, often together
        if _native_capture is capture:
            return
        # Read once, when the native logger is built (at the FFI's first initialization).
        os.environ.setdefault("RUST_LOG", NATIVE_STDERR_LEVEL)
        client = FfiClient.instance
        client._ffi_lib.livekit_ffi_initialize(
            _ffi_client.ffi_event_callback, capture, b"python", sdk_version.encode()
        )
        _native_capture = capture


class _Nowhere:
    """The queue and loop of the routing entry: the SDK never delivers to it (its filter
    routes and returns False), so both only satisfy the entry's shape."""

    def put_nowait(self, _item: Any) -> None:
        return None

    def call_soon_threadsafe(self, *_args: Any) -> None:
        return None


class _RoomRoutes:
    """Every narrowed room's listener by its room handle (and local participant handle),
    behind ONE entry of the SDK's subscriber list: an event costs one dictionary lookup,
    not a filter call per room in the process. Everything here runs under the SDK queue's
    lock (its `put` holds it on the FFI thread; `narrow_room_events` takes it)."""

    def __init__(self) -> None:
        self.by_room: dict[int, tuple[Any, Any]] = {}  # room handle -> (queue, loop)
        self.room_of: dict[int, int] = {}  # local participant handle -> room handle
        self.entry: tuple[Any, Any, Any] = (_Nowhere(), _Nowhere(), self.route)

    def add(self, subscribers: list[Any], index: int, room: int, participant: int) -> None:
        queue, loop, _ = subscribers.pop(index)
        self.by_room[room] = (queue, loop)
        self.room_of[participant] = room
        if not any(e is self.entry for e in subscribers):
            subscribers.append(self.entry)

    def route(self, event: proto_ffi.FfiEvent) -> bool:
        try:
            which = event.WhichOneof("message")
            if which == "room_event":
                handle = event.room_event.room_handle
                target = self.by_room.get(handle)
                if target is not None and event.room_event.HasField("eos"):
                    self._forget(handle)  # the listener's last event
                self._deliver(target, event)
            elif which == "rpc_method_invocation":
                room = self.room_of.get(event.rpc_method_invocation.local_participant_handle)
                self._deliver(self.by_room.get(room) if room is not None else None, event)
            elif which in _FORWARDED:  # rare: (un)publish callbacks their waiters match
                for target in list(self.by_room.values()):
                    self._deliver(target, event)
        except Exception as err:  # never let one event break delivery to the others
            log.error("ffi_route_failed", error=repr(err))
        return False

    def _forget(self, handle: int) -> None:
        self.by_room.pop(handle, None)
        for participant in [p for p, r in self.room_of.items() if r == handle]:
            del self.room_of[participant]

    @staticmethod
    def _deliver(target: tuple[Any, Any] | None, event: proto_ffi.FfiEvent) -> None:
        if target is None:
            return
        queue, loop = target
        try:
            loop.call_soon_threadsafe(queue.put_nowait, event)
        except RuntimeError:  # its loop closed without the room disconnecting first
            pass


_routes = _RoomRoutes()


def narrow_room_events(room: rtc.Room) -> bool:
    """Deliver only this room's events to its listener, routed by handle; True when done."""
    queue = getattr(room, "_ffi_queue", None)
    ffi = FfiClient.instance.queue
    subscribers = getattr(ffi, "_subscribers", None)
    try:
        room_handle = room._ffi_handle.handle  # type: ignore[union-attr]
        lp_handle = room.local_participant._ffi_handle.handle
    except AttributeError:
        room_handle = lp_handle = None
    if (
        queue is None
        or not isinstance(subscribers, list)
        or room_handle is None
        or lp_handle is None
    ):
        log.warning("ffi_filter_unavailable", reason="unexpected SDK internals")
        return False
    with ffi._lock:
        for i, entry in enumerate(subscribers):
            if entry[0] is queue:
                _routes.add(subscribers, i, room_handle, lp_handle)
                return True
    log.warning("ffi_filter_unavailable", reason="room listener not subscribed")
    return False


def routed_rooms() -> int:
    """How many room listeners the routing entry serves (for tests and the rooms view)."""
    return len(_routes.by_room)


def sdk_subscribers() -> int:
    """How many entries the SDK's event queue calls for every native event."""
    with FfiClient.instance.queue._lock:
        return len(FfiClient.instance.queue._subscribers)


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
        with _setup_lock:  # other threads' loops add and drop their own routers meanwhile
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
    metrics.PACKETS_PUBLISHED.labels(topic=topic).inc()
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
