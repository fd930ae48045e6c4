"""`steward bench fuzz --live`: hostile input through the real transport, while another room
is served.

One steward (real livekit-server, real Postgres) serves two rooms. In room A a hostile
participant, who may prompt and is the room's host (so the steward asks it for context), sends
generated and mutated payloads on every inbound path: the data topics, the prompt and cancel
RPCs, replies to the steward's own context RPC, the `agent:context` / `agent:screenshot` byte
streams with and without a pending request id (and oversized), `lk.transcription` text streams
and `POST /api/canvas-agent/run`. Meanwhile a well-behaved client in room B prompts and must
get a complete run with identical canvases.

- *input*: one payload sent on one path (a context RPC the hostile answers counts as one);
- *rejected*: the steward refused it with a counted reason (`steward_rejected_inbound_total`
  plus `steward_prompts_refused_total`); each must have its log line with a reason;
- *crash*: an exception escaping the steward's code (an error-level log line of ours, an
  exception logged by the SDK around our callbacks, an asyncio unhandled error), an HTTP 5xx,
  an RPC answered with the SDK's application error, or a room runtime that stopped.

Payloads come from hypothesis strategies (drawn deterministically up front: the network is too
slow to let hypothesis drive and shrink each example) and from the seeded mutators of
`steward_tools.rigs.mutate`, so a run is reproduced by its seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Coroutine, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import structlog
from hypothesis import HealthCheck, Phase, given
from hypothesis import seed as hypothesis_seed
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from livekit import rtc

from steward.api.app import RUN_PATH
from steward.obs import metrics
from steward.protocol.box import Box
from steward.protocol.limits import (
    MAX_DATA_PACKET_BYTES,
    MAX_PROMPT_CHARS,
    MAX_RPC_PAYLOAD_BYTES,
    MAX_SCREENSHOT_BYTES,
    MAX_SHAPES_JSON_BYTES,
)
from steward.protocol.messages import (
    Ack,
    CancelRequest,
    CanvasEdit,
    ComposingHint,
    ContextCounts,
    ContextReply,
    ContextRequest,
    PromptRequest,
    Resync,
    ViewportUpdate,
    WireModel,
)
from steward.protocol.names import (
    RPC_CANCEL,
    RPC_CONTEXT,
    RPC_PROMPT,
    SHAPES_TYPE_GZIP,
    SHAPES_TYPE_JSON,
    STREAM_ATTR_REQUEST_ID,
    TOPIC_ACK,
    TOPIC_COMPOSING,
    TOPIC_CONTEXT,
    TOPIC_EDIT,
    TOPIC_RESYNC,
    TOPIC_SCREENSHOT,
    TOPIC_TRANSCRIPTION,
    TOPIC_VIEWPORT,
)
from steward.room.runtime import RoomRuntime
from steward.service import StewardService
from steward.task_set import TaskSet
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs import mutate
from steward_tools.rigs.clients import canvas_hash
from steward_tools.rigs.fuzz_seeds import SEEDS, SHAPE_SEEDS
from steward_tools.waiting import wait_until

DATA_TOPICS: dict[str, type[WireModel]] = {
    TOPIC_ACK: Ack,
    TOPIC_VIEWPORT: ViewportUpdate,
    TOPIC_EDIT: CanvasEdit,
    TOPIC_RESYNC: Resync,
    TOPIC_COMPOSING: ComposingHint,
}
# A data packet over the SDK's own cap never leaves the client; stay under it.
DATA_CAP = MAX_DATA_PACKET_BYTES - 1_000
RPC_CAP = MAX_RPC_PAYLOAD_BYTES - 100
# Log events that record a refusal; each must carry a `reason`.
REJECTION_EVENTS = frozenset(
    {"inbound_rejected", "inbound_over_budget", "prompt_refused", "http_rejected"}
)
GOOD_PROMPT = "draw a flow chart of our signup"
# Over the RPC response timeout below: a send still unanswered after it is hung.
SEND_TIMEOUT_S = 15.0

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=40)
    | st.sampled_from(["NaN", "shape:a", "s1", "*", "steward", "🧚" * 20]),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=25,
)


def _dumps(value: Any) -> bytes:
    return mutate.to_text(value).encode("utf-8", "surrogatepass")


def _swap(seed: dict[str, Any], index: int, value: Any) -> dict[str, Any]:
    """A valid message with one field replaced by anything (or one key added)."""
    out = dict(seed)
    keys = [*out, "extra"]
    out[keys[index % len(keys)]] = value
    return out


def hostile_payloads(seeds: list[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    """Random bytes, arbitrary JSON, and valid messages with one field swapped."""
    return st.one_of(
        st.binary(max_size=512),
        JSON.map(_dumps),
        st.builds(_swap, st.sampled_from(seeds), st.integers(0, 50), JSON).map(_dumps),
        st.sampled_from(seeds).map(_dumps),  # some valid ones: they must be served, too
    )


def drawn(strategy: st.SearchStrategy[Any], n: int, seed: int) -> list[Any]:
    """`n` examples from a hypothesis strategy, deterministically for `seed`."""
    out: list[Any] = []

    @hypothesis_settings(
        max_examples=n,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out[:n]


def payloads(rng: random.Random, seeds: list[dict[str, Any]], n: int, seed: int) -> list[bytes]:
    """Half hypothesis-drawn, half seeded mutations of the valid seeds."""
    half = n // 2
    mutated = mutate.variants(rng, seeds, n - half, raw=mutate.random_bytes)
    return drawn(hostile_payloads(seeds), half, seed) + mutated


def shape_payloads(rng: random.Random, n: int, seed: int) -> list[bytes]:
    """The host's shapes stream: a JSON list of records, mutated or drawn."""
    record = st.dictionaries(st.sampled_from(["id", "type", "x", "y", "props", "rotation"]), JSON)
    strategy = st.one_of(st.binary(max_size=512), JSON.map(_dumps), st.lists(record).map(_dumps))
    half = n // 2
    return drawn(strategy, half, seed) + mutate.variants(
        rng, SHAPE_SEEDS, n - half, raw=mutate.random_bytes
    )


# --- observation ------------------------------------------------------------------------
@dataclass
class Observer:
    """Counts, from the steward's own log lines and metrics, rejections and crashes."""

    logged_rejections: Counter[str] = field(default_factory=Counter)
    unreasoned: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    _metric_base: float = 0.0

    def tap(self, _logger: Any, _name: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
        name = str(event.get("event", ""))
        if name in REJECTION_EVENTS:
            reason = event.get("reason")
            if reason:  # a sampled line stands for `count` refusals (steward.obs.sampled_log)
                self.logged_rejections[str(reason)] += int(event.get("count", 1))
            else:
                self.unreasoned.append(name)
        if event.get("level") in ("error", "critical") or event.get("exc_info"):
            self.crashes.append(f"log {name}: {str(event.get('error', ''))[:200]}")
        raise structlog.DropEvent  # thousands of refusals would drown the result

    def metric(self) -> float:
        total = 0.0
        for counter in (metrics.REJECTED_INBOUND, metrics.PROMPTS_REFUSED):
            for family in counter.collect():
                total += sum(s.value for s in family.samples if s.name.endswith("_total"))
        return total

    def start(self) -> None:
        self._metric_base = self.metric()

    def rejected(self) -> int:
        return int(self.metric() - self._metric_base)


class _StdlibErrors(logging.Handler):
    """Exceptions the SDK or asyncio caught around our callbacks are crashes."""

    def __init__(self, observer: Observer) -> None:
        super().__init__(logging.ERROR)
        self.observer = observer

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        ours = record.exc_info is not None or record.name == "asyncio"
        if ours or msg.startswith("error running user callback"):
            self.observer.crashes.append(f"{record.name}: {msg[:200]}")


@contextlib.contextmanager
def observing(observer: Observer) -> Iterator[None]:
    """Route structlog through the observer and catch stdlib errors, for the run only."""
    previous = structlog.get_config()
    structlog.configure(
        processors=[structlog.processors.add_log_level, observer.tap],
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
    )
    handler = _StdlibErrors(observer)
    root = logging.getLogger()
    root.addHandler(handler)
    loop = asyncio.get_running_loop()
    old_handler = loop.get_exception_handler()

    def on_loop_error(_loop: asyncio.AbstractEventLoop, ctx: dict[str, Any]) -> None:
        observer.crashes.append(f"loop: {ctx.get('message')} {ctx.get('exception')!r}"[:240])

    loop.set_exception_handler(on_loop_error)
    try:
        yield
    finally:
        loop.set_exception_handler(old_handler)
        root.removeHandler(handler)
        structlog.configure(**previous)


# --- the hostile participant -------------------------------------------------------------
@dataclass
class Tally:
    """What the live fuzz bench counted: inputs by kind, the ones not sent, revoked or hung, and
    crashes."""

    inputs: Counter[str] = field(default_factory=Counter)
    not_sent: Counter[str] = field(default_factory=Counter)  # refused by our own SDK/client
    # Dropped by the SFU: the steward had revoked the hostile's `can_publish_data`.
    revoked: Counter[str] = field(default_factory=Counter)
    hung: Counter[str] = field(default_factory=Counter)  # no answer within SEND_TIMEOUT_S
    crashes: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)


class Hostile:
    """Room A's attacker; also the host, so it answers the steward's context RPCs."""

    def __init__(self, client: HeadlessClient, rng: random.Random, seed: int, tally: Tally) -> None:
        self.client = client
        self.rng = rng
        self.seed = seed
        self.tally = tally
        self.lp = client.room.local_participant
        self.steward = client.steward_identity
        self.shape_inputs = [*shape_payloads(rng, 64, seed), json.dumps(SHAPE_SEEDS[0]).encode()]
        reply = SEEDS[ContextReply][0]
        self.reply_inputs = payloads(rng, [reply], 64, seed + 1)
        self.tasks = TaskSet("fuzz_task_failed")

    def revoked(self) -> bool:
        return not self.lp.permissions.can_publish_data

    async def attempt(self, path: str, send: Coroutine[Any, Any, Any]) -> Any:
        """One input: sent, or refused before it reached the steward (by the sending side, or
        by the SFU once the steward revoked the hostile's data rights)."""
        if self.revoked():
            # The SFU drops it: an RPC would only wait out its connection timeout (7 s).
            send.close()
            self.tally.revoked[path] += 1
            return None
        try:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                result = await send
        except TimeoutError:
            self.tally.hung[path] += 1
            return None
        except rtc.RpcError as err:
            if err.code == rtc.RpcError.ErrorCode.APPLICATION_ERROR:
                self.tally.crashes.append(f"{path}: rpc application error {err.message}")
            elif err.code == rtc.RpcError.ErrorCode.CONNECTION_TIMEOUT and self.revoked():
                self.tally.revoked[path] += 1  # revoked while this request was under way
                return None
            elif err.code in (
                rtc.RpcError.ErrorCode.REQUEST_PAYLOAD_TOO_LARGE,
                rtc.RpcError.ErrorCode.RESPONSE_TIMEOUT,
            ):
                self.tally.not_sent[path] += 1
                return None
            self.tally.inputs[path] += 1
            return None
        except Exception:
            self.tally.not_sent[path] += 1
            return None
        self.tally.inputs[path] += 1
        return result

    # Data packets ------------------------------------------------------------------------
    async def data(self, topic: str, items: list[bytes]) -> None:
        for data in items:
            await self.attempt(
                f"data:{topic}",
                self.lp.publish_data(
                    data[:DATA_CAP],
                    reliable=True,
                    topic=topic,
                    destination_identities=[self.steward],
                ),
            )

    # RPCs ----------------------------------------------------------------------------------
    async def rpc(self, method: str, items: list[bytes]) -> None:
        for data in items:
            reply = await self.attempt(
                f"rpc:{method}",
                self.lp.perform_rpc(
                    destination_identity=self.steward,
                    method=method,
                    payload=data.decode("utf-8", "replace")[:RPC_CAP],
                    response_timeout=10,
                ),
            )
            if method == RPC_PROMPT and isinstance(reply, str):
                with contextlib.suppress(ValueError):
                    sid = json.loads(reply).get("sessionId")
                    if sid:
                        self.tally.sessions.append(sid)

    async def cancels(self, items: list[bytes]) -> None:
        """Garbage, plus cancels of sessions that exist (the steward's own ids)."""
        await self.rpc(RPC_CANCEL, items)
        for sid in self.tally.sessions[:3]:
            await self.rpc(RPC_CANCEL, [CancelRequest(session_id=sid).to_wire()])

    # Byte and text streams ---------------------------------------------------------------
    async def stream(
        self,
        topic: str,
        data: bytes,
        request_id: str | None,
        mime_type: str = "application/octet-stream",
    ) -> None:
        attrs = {} if request_id is None else {STREAM_ATTR_REQUEST_ID: request_id}
        await self.attempt(
            f"stream:{topic}",
            self.lp.send_bytes(
                data,
                topic=topic,
                destination_identities=[self.steward],
                attributes=attrs,
                mime_type=mime_type,
            ),
        )

    async def unrequested_streams(self, n: int) -> None:
        """Streams nobody asked for: no request id, a made-up one, and one oversized."""
        for i in range(n):
            topic = (TOPIC_CONTEXT, TOPIC_SCREENSHOT)[i % 2]
            rid = (None, uuid.uuid4().hex, "", "../" * 30)[i % 4]
            await self.stream(topic, self.rng.choice(self.shape_inputs), rid)
        await self.stream(TOPIC_SCREENSHOT, b"\xff" * (MAX_SCREENSHOT_BYTES + 10), None)

    async def transcriptions(self, n: int, seed: int) -> None:
        texts = drawn(st.text(max_size=200), n // 2, seed)
        bases = ["steward, draw a cat", "hey Steward draw boxes", "ask the steward", "STEWARD"]
        texts += [mutate.mutate_text(self.rng, self.rng.choice(bases)) for _ in range(n - n // 2)]
        # Oversized, and first: a sender muted for what it sent earlier has its streams
        # dropped at their header, unread (no `oversize` would be seen).
        texts.insert(0, "steward " + "x" * (MAX_PROMPT_CHARS * 2 + 10))
        for i, text in enumerate(texts):
            final = ("true", "false", "", "TRUE")[i % 4]
            await self.attempt(
                "text:lk.transcription",
                self.lp.send_text(
                    text,
                    topic=TOPIC_TRANSCRIPTION,
                    destination_identities=[self.steward],
                    attributes={"lk.transcription_final": final},
                ),
            )

    # Answers to the steward's own context RPC ----------------------------------------------
    async def on_context(self, inv: rtc.RpcInvocationData) -> str:
        """Every way a host can answer badly; the steward must degrade, never fail."""
        self.tally.inputs["reply:steward.context"] += 1
        try:
            req = ContextRequest.model_validate_json(inv.payload)
        except ValueError:
            return "{}"
        mode = self.rng.randrange(8)
        if mode == 0:
            raise rtc.RpcError(1500, "no context today")
        if mode == 1:
            await asyncio.sleep(30)  # past the steward's timeout
            return "{}"
        if mode == 2:
            data = self.rng.choice(self.reply_inputs)
            return data.decode("utf-8", "replace")[:RPC_CAP]
        reply = ContextReply(
            request_id=req.request_id if mode != 3 else "someone-else",
            viewport=Box(x=0, y=0, w=1280, h=800),
            selection=[],
            doc_version=self.rng.randrange(5),
            counts=ContextCounts(shapes=len(SHAPE_SEEDS[0])),
            streams=["shapes", "screenshot"],
        )
        self._spawn(self._answer_streams(req.request_id, mode))
        return reply.to_wire().decode()

    async def _answer_streams(self, request_id: str, mode: int) -> None:
        """Streams with the pending request id: bad shapes, oversized, or missing."""
        if mode == 4:
            shapes = b"[" * 10 + b"x" * (MAX_SHAPES_JSON_BYTES + 10)
        else:
            shapes = self.rng.choice(self.shape_inputs)
        shapes, shapes_type = self._shapes_encoding(shapes, oversized=mode == 4)
        if mode != 5:  # 5: announced but never sent
            await self.stream(TOPIC_CONTEXT, shapes, request_id, shapes_type)
        # Accepted image types (bytes that do not match them) and types that are refused.
        image_type = self.rng.choice(("image/webp", "image/jpeg", "image/png", ""))
        if mode == 6:
            big = b"\x00" * (MAX_SCREENSHOT_BYTES + 10)
            await self.stream(TOPIC_SCREENSHOT, big, request_id, "image/webp")
        elif mode != 5:
            await self.stream(TOPIC_SCREENSHOT, self.rng.randbytes(2_000), request_id, image_type)

    def _shapes_encoding(self, shapes: bytes, *, oversized: bool) -> tuple[bytes, str]:
        """Plain, gzip (valid, corrupt or cut short), or a gzip bomb when `oversized`."""
        if oversized and self.rng.random() < 0.5:
            kind = "bomb"
        else:
            kind = self.rng.choice(("plain", "gzip", "random", "cut"))
        data, gzipped = mutate.gzip_variant(self.rng, shapes, kind, cap=MAX_SHAPES_JSON_BYTES)
        return data, SHAPES_TYPE_GZIP if gzipped else SHAPES_TYPE_JSON

    def _spawn(self, coro: Awaitable[None]) -> None:
        self.tasks.spawn(coro)


# --- HTTP ---------------------------------------------------------------------------------
async def http_fuzz(
    base: str, key: str, room: str, n: int, rng: random.Random, seed: int, tally: Tally
) -> None:
    """Bad bodies and bad keys on `POST /api/canvas-agent/run`; any 5xx is a crash."""
    seeds: list[dict[str, Any]] = [
        {"roomId": room, "message": "draw a red circle"},
        {"roomId": room, "message": "x", "viewport": {"x": 0, "y": 0, "w": 10, "h": 10}},
    ]
    bodies = [*payloads(rng, seeds, n, seed), b"{" + b" " * 70_000 + b"}"]
    auths = [
        {},
        {"Authorization": "Bearer nope"},
        {"Authorization": f"Basic {key}"},
        {"Authorization": f"Bearer {key}"},
        {"Authorization": f"bearer  {key} "},
    ]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as http:
        for i, body in enumerate(bodies):
            headers = {**auths[i % len(auths)], "Content-Type": "application/json"}
            try:
                async with http.post(base + RUN_PATH, data=body, headers=headers) as r:
                    tally.inputs["http:run"] += 1
                    if r.status >= 500:
                        tally.crashes.append(f"http {r.status}: {(await r.text())[:200]}")
            except aiohttp.ClientError as err:
                tally.crashes.append(f"http: {type(err).__name__}: {err}"[:200])


# --- the run -------------------------------------------------------------------------------
async def _good_room(
    server: LiveKitServer,
    runtime: RoomRuntime,
    prompts: int,
    timeout: float,
    clients: list[HeadlessClient],
) -> dict[str, Any]:
    """Room B: two honest browsers; one prompts; all must end identical and complete.

    The browsers stay connected (the caller disconnects `clients`): LiveKit closes an emptied
    room, and a room closed under the steward would read as a stopped runtime."""
    for name in ("ann", "ben"):
        c = HeadlessClient.create(
            server.url, server.api_key, server.api_secret, room=runtime.room_id, identity=name
        )
        clients.append(c)
        await c.connect()
    statuses: list[str] = []
    await wait_until(lambda: len(runtime.participants.appliers()) == 2, 20, "good room clients")
    await asyncio.sleep(0.5)  # the flood in room A is under way
    for _ in range(prompts):
        reply = await clients[0].prompt(GOOD_PROMPT)
        if reply.session_id is None:
            statuses.append(f"refused: {reply.error}")
            continue
        statuses.append(await clients[1].wait_status(reply.session_id, timeout=timeout))
        last = runtime.broadcaster.stats(reply.session_id).last_seq
        await wait_until(
            lambda sid=reply.session_id, last=last: (  # type: ignore[misc]
                all(c.applied_seq(sid) == last for c in clients)
                and runtime.broadcaster.total_unacked() == 0
            ),
            timeout,
            "good room run applied everywhere",
        )
    mirror = canvas_hash(runtime.mirror.shapes)
    identical = all(canvas_hash(c.shapes) == mirror for c in clients)
    return {
        "statuses": statuses,
        "shapes": len(runtime.mirror.shapes),
        "identical": identical,
        "ok": identical and statuses == ["done"] * prompts and len(runtime.mirror.shapes) > 0,
    }


async def fuzz_live(
    service: StewardService,
    server: LiveKitServer,
    *,
    per_path: int = 40,
    seed: int = 1,
    limit_s: float = 120.0,
    good_prompts: int = 1,
) -> dict[str, Any]:
    """The live fuzz run on an already started service (with HTTP and an API key)."""
    assert service.http_port is not None, "start the service with HTTP"
    api_key = service.settings.steward_api_key
    assert api_key is not None, "set steward_api_key"
    rng = random.Random(seed)
    tag = uuid.uuid4().hex[:6]
    room_a, room_b = f"fuzz-a-{tag}", f"fuzz-b-{tag}"
    runtime_a = await service.join(room_a)
    runtime_b = await service.join(room_b)
    observer, tally = Observer(), Tally()
    started = time.monotonic()
    client = HeadlessClient.create(
        server.url, server.api_key, server.api_secret, room=room_a, identity="mallory"
    )
    await client.connect()
    hostile = Hostile(client, rng, seed, tally)
    client.room.local_participant.register_rpc_method(RPC_CONTEXT, hostile.on_context)
    timed_out = False
    good: dict[str, Any] = {"ok": False}
    good_clients: list[HeadlessClient] = []
    try:
        await wait_until(lambda: runtime_a.participants.host == "mallory", 20, "hostile host")
        with observing(observer):
            observer.start()
            data = {
                t: payloads(rng, SEEDS[m], per_path, seed + i)
                for i, (t, m) in enumerate(DATA_TOPICS.items())
            }
            oversize_ack = json.dumps(
                {"sessionId": "s", "seq": 1, "applied": ["a" * 100] * 200, "appliedAt": 1.0}
            ).encode()
            data[TOPIC_ACK].insert(0, oversize_ack)  # first: before any mute
            prompts = payloads(rng, SEEDS[PromptRequest], per_path, seed + 10)
            # Valid prompts among them start sessions, whose context the hostile host answers.
            valid = PromptRequest(message="draw a red circle").to_wire()
            prompts[::4] = [valid] * len(prompts[::4])
            cancels = payloads(rng, SEEDS[CancelRequest], per_path // 2, seed + 11)
            base = f"http://127.0.0.1:{service.http_port}"
            attacks = [
                *(hostile.data(t, items) for t, items in data.items()),
                hostile.rpc(RPC_PROMPT, prompts),
                hostile.cancels(cancels),
                hostile.unrequested_streams(per_path // 2),
                hostile.transcriptions(per_path // 2, seed + 12),
                http_fuzz(base, api_key.get_secret_value(), room_a, per_path, rng, seed, tally),
            ]
            good_task = asyncio.ensure_future(
                _good_room(server, runtime_b, good_prompts, max(30.0, limit_s / 2), good_clients)
            )
            try:
                async with asyncio.timeout(limit_s):
                    await asyncio.gather(*attacks)
            except TimeoutError:
                timed_out = True
            try:
                good = await asyncio.wait_for(good_task, max(30.0, limit_s / 2))
            except Exception as err:
                good = {"ok": False, "error": f"{type(err).__name__}: {err}"}
            # Room A still serves: a prompt over HTTP runs to the end despite its host.
            a_outcome = await _room_a_still_serves(service, runtime_a)
            # Let in-flight context answers land before counting.
            await asyncio.sleep(0.5)
            hostile.tasks.cancel()
            rejected = observer.rejected()
    finally:
        # Rooms that stopped while served, before our own leaving empties and closes them.
        stopped = [r.room_id for r in (runtime_a, runtime_b) if r.closed.is_set()]
        for c in (client, *good_clients):
            with contextlib.suppress(Exception):
                await c.disconnect()
    crashes = observer.crashes + tally.crashes + [f"room stopped: {r}" for r in stopped]
    logged = sum(observer.logged_rejections.values())
    return {
        "inputs": sum(tally.inputs.values()),
        "rejected": rejected,
        "crashes": len(crashes),
        "other_room_ok": bool(good.get("ok")),
        "rejections_logged": logged,
        "rejections_unlogged": max(0, rejected - logged) + len(observer.unreasoned),
        "reasons": dict(observer.logged_rejections.most_common()),
        "by_path": dict(sorted(tally.inputs.items())),
        "not_sent": dict(tally.not_sent),
        "refused_by_revocation": dict(tally.revoked),
        "hung": dict(tally.hung),
        "sessions_in_hostile_room": len(tally.sessions),
        "room_a_after": a_outcome,
        "other_room": good,
        "timed_out": timed_out,
        "seed": seed,
        "seconds": round(time.monotonic() - started, 2),
        **({"crash_examples": sorted(set(crashes))[:5]} if crashes else {}),
    }


async def _room_a_still_serves(service: StewardService, runtime: RoomRuntime) -> str:
    try:
        sid = (await service.run_http(runtime.room_id, GOOD_PROMPT, None, None)).session_id
        result = await runtime.sessions.wait(sid, timeout=60)
        return result.outcome
    except Exception as err:
        return f"{type(err).__name__}: {err}"


async def run_bench(per_path: int = 40, seed: int = 1, limit_s: float = 120.0) -> dict[str, Any]:
    """`steward bench fuzz --live`: its own livekit-server, Postgres and steward."""
    from steward_tools.bench.harness import start_api_stack
    from steward_tools.waiting import bounded

    stack = await start_api_stack("fuzz", tokens_per_s=400.0)
    try:
        result: dict[str, Any] = await bounded(
            fuzz_live(stack.service, stack.server, per_path=per_path, seed=seed, limit_s=limit_s),
            limit_s * 2 + 120,
            "live fuzz",
        )
        return result
    finally:
        await stack.close()
