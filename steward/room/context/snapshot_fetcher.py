"""Context and screenshots from browsers: RPC `steward.context` plus correlated byte streams
(`room.inbound.stream_inbox`), answered from `snapshot_cache` when it can be.

Whose view: a prompt's context is the asker's. The asker's own browser is asked first when
it offers context; else the host renders the asker's last published viewport (`Views`), and
the asker's published selection stands; then the other capable browsers. Each browser gets
bounded retries (tenacity, exponential backoff) for quick failures only: one that answered
late (an RPC or stream timeout) or sent what was refused is not asked again in that fetch,
the next browser is. A browser whose fetch failed is asked after every other one (and is
host only when no other can be) for `AVOID_S`, so the run's next look and the room's next
runs go to a tab that can answer; one that sent what no honest browser sends (a malformed
reply, a stream over its cap, a bomb, the wrong image type) is not asked at all and loses the
host role for `DEMOTE_S` at once, and so does one failing `DEMOTE_AFTER` fetches within
`DEMOTE_WINDOW_S`, however many it answered in between. When none delivers, the
run goes on text-only with the steward's mirror of the canvas and is logged as degraded. A
prompt with no browser behind it (HTTP, voice with no canvas open) gets the host's view, no
selection, and a `view_note` telling the model so. The asker's own edits since the agent
last looked ride along (`UserEdits` in relay mode; the asker's browser reports them in host
mode).

`prefetch` starts the same fetch in the background while a user composes a prompt (a
`steward:composing` hint): it never degrades, raises or counts as a run.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from livekit import rtc
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from steward.canvas.mirror import CanvasMirror
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.obs.stage_hooks import Stage, StageHooks
from steward.ports import CanvasSnapshot, Picture, PromptSource
from steward.protocol import ProtocolError, decode
from steward.protocol.box import Box
from steward.protocol.limits import MAX_RPC_PAYLOAD_BYTES
from steward.protocol.messages import ContextPart, ContextReply, ContextRequest
from steward.protocol.names import RPC_CONTEXT, SCREENSHOT_TYPE_JPEG, TOPIC_CONTEXT
from steward.room.context.snapshot_cache import FlightKey, SnapshotCache, view_for
from steward.room.context.views import Views
from steward.room.inbound.stream_inbox import (
    ContextFailure,
    ContextLate,
    ContextRefused,
    Received,
    StreamInbox,
    parse_shapes,
)
from steward.room.inbound.user_edits import UserEdits
from steward.room.participants import Participants

log = get_logger(__name__)

DEFAULT_VIEWPORT = Box(x=0, y=0, w=1280, h=800)

PerformRpc = Callable[..., Awaitable[str]]
# A whole fetch (every candidate, every attempt) ends after this many `timeout_s`.
TOTAL_TIMEOUTS = 4
# A browser whose answers failed this many fetches within the window (answered ones in
# between notwithstanding) loses the host role for a while.
DEMOTE_AFTER = 3
DEMOTE_WINDOW_S = 300.0
DEMOTE_S = 120.0
# A browser whose last answer failed is asked last for this long.
AVOID_S = 30.0


@dataclass
class _Attempt:
    reply: ContextReply | None = None
    shapes: list[dict[str, Any]] | None = None
    screenshot: Received | None = None
    identity: str | None = None
    errors: list[str] = field(default_factory=list)


PrefetchOutcome = Literal["started", "cached", "in_flight", "no_host"]


@dataclass(frozen=True)
class _Ask:
    """One candidate browser of a fetch and what to ask it for."""

    identity: str
    bounds: Box | None
    user_changes: bool = False  # host mode: the asker's own browser reports its edits
    max_size: int | None = None  # the image's long side (None: the fetcher's own)
    image_only: bool = False  # a picture: no shapes, no selection


def view_note(source: PromptSource | None) -> str | None:
    """What the model is told when the view it gets is not the asker's (None: it is, or the
    run is the steward's own, e.g. a fairy's)."""
    if source is None or source == "system":
        return None
    if source == "http":
        why = "This request came over HTTP, with no browser behind it"
    elif source == "voice":
        why = "This request was spoken by someone with no canvas open"
    else:
        why = "The asker's browser did not share its view"
    return (
        f"{why}: the user's view shown is another person's (the host browser that answered), not "
        "the asker's, and the asker's selection is unknown (nothing counts as selected)."
    )


class SnapshotFetcher:
    """Fetches a run's context and screenshot from the right browser, from the cache when it can."""

    def __init__(
        self,
        room_id: str,
        perform_rpc: PerformRpc,
        participants: Participants,
        inbox: StreamInbox,
        mirror: CanvasMirror,
        room_version: Callable[[], int],
        *,
        timeout_s: float = 2.0,
        attempts: int = 2,
        cache_ttl_s: float = 2.0,
        prefetch_ttl_s: float | None = 15.0,  # None: as long as any cached answer
        max_size: int | None = None,
        max_bytes: int | None = None,
        on_reject: Callable[..., None] | None = None,
        clock: Callable[[], float] = time.monotonic,  # of cache ages and failed fetches
        adopt_shapes: bool = False,
        views: Views | None = None,
        edits: UserEdits | None = None,
        browser_changes: bool = False,  # host mode: ask the asker's browser for its edits
    ) -> None:
        self.room_id = room_id
        # (topic, sender, reason, detail): a host's reply or stream we refused, counted.
        self._on_reject = on_reject
        self._rpc = perform_rpc
        self.hooks = StageHooks()
        self._participants = participants
        self._inbox = inbox
        self._mirror = mirror
        # Host mode: user edits bypass the steward, so a fetched page replaces the mirror's.
        self._adopt_shapes = adopt_shapes
        self._room_version = room_version
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.max_size = max_size
        self.max_bytes = max_bytes
        self._views = views if views is not None else Views()
        self._edits = edits if edits is not None else UserEdits()
        self._browser_changes = browser_changes
        self.cache = SnapshotCache(
            room_id,
            room_version,
            ttl_s=cache_ttl_s,
            prefetch_ttl_s=cache_ttl_s if prefetch_ttl_s is None else prefetch_ttl_s,
            clock=clock,
        )
        self._inflight: dict[str, set[asyncio.Task[str]]] = {}
        self.degraded_runs = 0
        self._clock = clock
        self._failures: dict[str, list[float]] = {}  # identity -> times of failed fetches

    def participant_left(self, identity: str) -> None:
        """Fail requests to a browser that left (or was muted) at once, instead of waiting for
        a timeout."""
        for task in self._inflight.pop(identity, set()):
            task.cancel()

    def holds(self, identity: str) -> bool:
        """Whether a request to `identity` is still in flight."""
        return bool(self._inflight.get(identity))

    def candidates(self) -> list[str]:
        host = self._participants.host
        rest = [m.identity for m in self._participants.with_capability("context")]
        return ([host] if host else []) + [i for i in rest if i != host]

    def _own_browser(self, asker: str | None, want_screenshot: bool) -> str | None:
        """The asker, when its browser offers context (and a screenshot, when one is wanted)."""
        member = self._participants.get(asker) if asker else None
        if member is None or not member.has("context"):
            return None
        if member.identity in self._participants.demoted():
            return None
        if want_screenshot and not member.has("screenshot"):
            return None
        return member.identity

    def _plan(self, bounds: Box | None, want_screenshot: bool, asker: str | None) -> list[_Ask]:
        """The asker's own browser first; the others render the asker's viewport if known."""
        own = self._own_browser(asker, want_screenshot)
        view = self._views.get(asker)
        theirs = bounds if bounds is not None or view is None else view.viewport
        plan = [_Ask(own, bounds, self._browser_changes)] if own else []
        plan += [_Ask(c, theirs) for c in self.candidates() if c != own]
        avoided = self._participants.avoided()
        return [a for a in plan if a.identity not in avoided] + [
            a for a in plan if a.identity in avoided
        ]

    async def fetch(
        self,
        *,
        bounds: Box | None = None,
        want_screenshot: bool = True,
        asker: str | None = None,
        source: PromptSource | None = None,
    ) -> CanvasSnapshot:
        """The context of one look at the canvas by a run for `asker` (None: no participant
        behind the prompt; `source` says why, for the note to the model)."""
        context = await self._fetch(bounds, want_screenshot, asker)
        return self._for_asker(context, asker, source)

    async def _fetch(
        self, bounds: Box | None, want_screenshot: bool, asker: str | None
    ) -> CanvasSnapshot:
        started = time.monotonic()
        cached = self.cache.lookup(bounds, want_screenshot, asker)
        if cached is not None:
            result = "prefetched" if cached.source == "prefetched" else "cached"
            if result == "prefetched":
                self.cache.prefetch_stats["served"] += 1
            metrics.CONTEXT_SECONDS.labels(result=result).observe(time.monotonic() - started)
            return cached
        key = self.cache.flight_key(bounds, want_screenshot, asker)
        joined = await self.cache.join(key, bounds, asker)
        if joined is not None:
            metrics.CONTEXT_SECONDS.labels(result="prefetched").observe(time.monotonic() - started)
            return joined
        # No prefetch ran, or it found no answer: fetch in full (and degrade if need be).
        best = _Attempt()
        view = self._views.get(asker)
        with self.cache.fetching(key):
            got = await self._load(bounds, want_screenshot, asker, best)
        if got is None:
            return self._degraded(best, bounds, started)
        context = self._context(got, bounds, degraded=False)
        if self._adopt_shapes and got.shapes is not None:
            self._mirror.load(got.shapes)
        self.cache.store(
            context, key, bounds, asker, view_for(context, asker, view), prefetched=False
        )
        metrics.CONTEXT_SECONDS.labels(result="ok").observe(time.monotonic() - started)
        return context

    def _for_asker(
        self, context: CanvasSnapshot, asker: str | None, source: PromptSource | None
    ) -> CanvasSnapshot:
        """The viewport and selection are the asker's; so are the user changes."""
        changes = context.user_changes if self._browser_changes else self._edits.take(asker)
        if asker is not None and context.source_identity == asker:
            return replace(context, asker=asker, user_changes=changes)
        view = self._views.get(asker)
        if view is not None:
            return replace(
                context,
                viewport=view.viewport,
                selection=list(view.selection),
                asker=asker,
                user_changes=changes,
            )
        note = view_note(source)
        if note is None:  # the steward's own runs (fairies) see the answering browser's view
            return replace(context, user_changes=changes)
        log.info(
            "context_not_askers_view",
            room=self.room_id,
            asker=asker,
            source=source,
            answered_by=context.source_identity,
        )
        return replace(context, selection=[], user_changes=changes, asker=None, view_note=note)

    async def picture(self, bounds: Box, max_size: int) -> Picture | None:
        """A small image of `bounds` from the first browser that renders one: not cached,
        never degraded (None, logged, when none delivered in time)."""
        best = _Attempt()
        plan = [
            _Ask(c, bounds, max_size=max_size, image_only=True)
            for c in self.candidates()
            if (m := self._participants.get(c)) is not None and m.has("screenshot")
        ]
        got = await self._load_plan(plan, True, best)
        if got is None or got.screenshot is None:
            log.info("picture_failed", room=self.room_id, reasons=best.errors[-4:])
            return None
        return Picture(bounds=bounds, data=got.screenshot.data, media_type=got.screenshot.mime_type)

    def prefetch(
        self, bounds: Box | None = None, *, want_screenshot: bool = True, asker: str | None = None
    ) -> PrefetchOutcome:
        """Start loading the context a prompt by `asker` with `bounds` will ask for, in the
        background.

        Never raises and never degrades: a failure is logged and the prompt fetches as usual.
        """
        if self.cache.lookup(bounds, want_screenshot, asker, peek=True) is not None:
            return "cached"
        key = self.cache.flight_key(bounds, want_screenshot, asker)
        if self.cache.busy(key):
            return "in_flight"
        if not self.candidates():
            return "no_host"
        self.cache.start_prefetch(key, self._prefetch(bounds, want_screenshot, asker, key))
        return "started"

    async def _prefetch(
        self, bounds: Box | None, want_screenshot: bool, asker: str | None, key: FlightKey
    ) -> CanvasSnapshot | None:
        started = time.monotonic()
        best = _Attempt()
        view = self._views.get(asker)
        try:
            got = await self._load(bounds, want_screenshot, asker, best)
        except Exception as err:  # never into the room: the prompt will fetch on its own
            best.errors.append(repr(err))
            got = None
        took = time.monotonic() - started
        if got is None:
            self.cache.prefetch_stats["failed"] += 1
            metrics.CONTEXT_PREFETCH_SECONDS.labels(result="failed").observe(took)
            log.info("context_prefetch_failed", room=self.room_id, reasons=best.errors[-4:])
            return None
        context = self._context(got, bounds, degraded=False)
        context.source = "prefetched"
        self.cache.store(
            context, key, bounds, asker, view_for(context, asker, view), prefetched=True
        )
        self.cache.prefetch_stats["ok"] += 1
        metrics.CONTEXT_PREFETCH_SECONDS.labels(result="ok").observe(took)
        log.info(
            "context_prefetched",
            room=self.room_id,
            participant=got.identity,
            ms=round(took * 1000, 1),
            shapes=len(context.shapes),
            image_bytes=len(context.screenshot or b""),
            image_type=context.screenshot_type if context.screenshot else None,
            stale=key[3] != self._room_version(),
        )
        return context

    async def close(self) -> None:
        """Stop running prefetches (the room is closing)."""
        await self.cache.close()

    async def _load(
        self, bounds: Box | None, want_screenshot: bool, asker: str | None, best: _Attempt
    ) -> _Attempt | None:
        """The first candidate's full answer, or None (reasons in `best.errors`)."""
        return await self._load_plan(
            self._plan(bounds, want_screenshot, asker), want_screenshot, best
        )

    async def _load_plan(
        self, plan: list[_Ask], want_screenshot: bool, best: _Attempt
    ) -> _Attempt | None:
        try:
            # One bound for all candidates and attempts: under overload each RPC can take
            # several times its own timeout, and a slow context must not eat the whole run.
            async with asyncio.timeout(self.timeout_s * TOTAL_TIMEOUTS):
                return await self._first_answer(plan, want_screenshot, best)
        except TimeoutError:
            best.errors.append(f"no answer within {self.timeout_s * TOTAL_TIMEOUTS:.1f}s")
        return None

    async def _first_answer(
        self, plan: list[_Ask], want_screenshot: bool, best: _Attempt
    ) -> _Attempt | None:
        for ask in plan:
            identity = ask.identity

            # A browser demoted meanwhile (its answer was refused, or it was muted) is not
            # asked again in this fetch: the time goes to the next candidate or to degrading.
            def trusted(_err: BaseException, who: str = identity) -> bool:
                return who not in self._participants.demoted()

            try:
                async for attempt in AsyncRetrying(
                    stop=stop_after_attempt(self.attempts),
                    wait=wait_exponential(multiplier=0.05, max=0.5),
                    retry=retry_if_exception(_retryable) & retry_if_exception(trusted),
                    reraise=True,
                ):
                    with attempt:
                        got = await self._ask(ask, want_screenshot, best)
                return got
            except ContextFailure as err:
                best.errors.append(f"{identity}: {err}")
                log.info("context_attempts_failed", room=self.room_id, participant=identity)
                if not ask.image_only:  # a picture is extra: missing one demotes no host
                    self._failed(identity, err)
        return None

    def _failed(self, identity: str, err: ContextFailure) -> None:
        """One more fetch this browser failed: it is asked last for a while; one that sent
        what no honest browser sends is demoted at once, and so is one at DEMOTE_AFTER
        failures within DEMOTE_WINDOW_S (successes do not reset the count: honest one time
        in three is not enough)."""
        if isinstance(err, ContextRefused):
            self._failures.pop(identity, None)
            self._participants.demote(identity, DEMOTE_S)
            return
        self._participants.avoid(identity, AVOID_S)
        now = self._clock()
        times = [t for t in self._failures.get(identity, []) if now - t < DEMOTE_WINDOW_S]
        times.append(now)
        self._failures[identity] = times
        if len(times) >= DEMOTE_AFTER:
            self._failures.pop(identity, None)
            self._participants.demote(identity, DEMOTE_S)

    def _degraded(self, best: _Attempt, bounds: Box | None, started: float) -> CanvasSnapshot:
        self.degraded_runs += 1
        context = self._context(best, bounds, degraded=True)
        log.warning(
            "context_degraded",
            room=self.room_id,
            reasons=best.errors[-4:],
            shapes=len(context.shapes),
            candidates=len(self.candidates()),
        )
        metrics.CONTEXT_SECONDS.labels(result="degraded").observe(time.monotonic() - started)
        return context

    async def _ask(self, ask: _Ask, want_screenshot: bool, best: _Attempt) -> _Attempt:
        identity, bounds = ask.identity, ask.bounds
        member = self._participants.get(identity)
        if member is None:
            raise ContextFailure("participant left")
        shot = want_screenshot and member.has("screenshot")
        want: list[ContextPart] = (
            ["viewport"] if ask.image_only else ["viewport", "selection", "shapes"]
        )
        if shot:
            want.append("screenshot")
        if ask.user_changes:
            want.append("user_changes")
        request_id = uuid.uuid4().hex
        caps = {"screenshot": self.max_bytes} if self.max_bytes else {}
        futures = self._inbox.expect(request_id, identity, ["shapes", "screenshot"], caps)
        try:
            req = ContextRequest(
                request_id=request_id,
                bounds=bounds,
                max_size=ask.max_size or self.max_size,
                max_bytes=self.max_bytes,
                want=want,
            )
            rpc = self._rpc(
                destination_identity=identity,
                method=RPC_CONTEXT,
                payload=req.to_wire().decode(),
                response_timeout=self.timeout_s,
            )
            call = asyncio.ensure_future(
                self.hooks.timed(Stage.CONTEXT_RPC_REPLY, rpc, request_id=request_id)
            )
            self._inflight.setdefault(identity, set()).add(call)
            try:
                raw = await call
            except rtc.RpcError as err:
                late = err.code in _LATE_RPC_CODES
                failure = ContextLate if late else ContextFailure
                raise failure(f"rpc {err.code}: {err.message}") from err
            except asyncio.CancelledError:
                if call.cancelled() and not _current_cancelling():
                    raise ContextFailure("participant left") from None
                raise
            finally:
                self._inflight.get(identity, set()).discard(call)
            reply = decode(ContextReply, raw, topic=RPC_CONTEXT, max_bytes=MAX_RPC_PAYLOAD_BYTES)
            if isinstance(reply, ProtocolError):
                self._reject(RPC_CONTEXT, identity, reply.kind, reply.reason)
                raise ContextRefused(f"bad reply: {reply}")
            if reply.request_id != request_id:
                self._reject(RPC_CONTEXT, identity, "wrong_request_id")
                raise ContextRefused("reply for another request")
            got = _Attempt(reply=reply, identity=identity)
            if best.reply is None and not ask.image_only:
                best.reply, best.identity = reply, identity
            waits = {k: futures[k] for k in ("shapes", "screenshot") if k in reply.streams}
            if not shot:
                waits.pop("screenshot", None)
            try:
                async with asyncio.timeout(self.timeout_s):
                    for kind, fut in waits.items():
                        received = await fut
                        if kind == "screenshot":
                            got.screenshot = received
                        else:
                            try:
                                got.shapes = parse_shapes(received.data)
                            except ContextFailure as err:
                                self._reject(TOPIC_CONTEXT, identity, "invalid_shapes", str(err))
                                raise ContextRefused(str(err)) from err
                            if best.shapes is None:
                                best.shapes = got.shapes
            except TimeoutError as err:
                missing = [k for k, f in waits.items() if not f.done()]
                raise ContextLate(f"stream timeout: {','.join(missing)}") from err
            if shot and got.screenshot is None:
                raise ContextFailure("screenshot announced but not sent")
            return got
        finally:
            self._inbox.discard(request_id)

    def _reject(self, topic: str, sender: str, reason: str, detail: str = "") -> None:
        if self._on_reject is not None:
            self._on_reject(topic, sender, reason, detail)

    def _context(self, got: _Attempt, bounds: Box | None, *, degraded: bool) -> CanvasSnapshot:
        reply = got.reply
        shapes = got.shapes
        shot = None if degraded else got.screenshot
        if shapes is None:
            # Text-only: the steward's own mirror is the best view of the canvas it has.
            shapes = [dict(s) for s in self._mirror.shapes.values()]
        return CanvasSnapshot(
            viewport=reply.viewport if reply else (bounds or DEFAULT_VIEWPORT),
            selection=list(reply.selection) if reply else [],
            doc_version=reply.doc_version if reply else 0,
            shapes=shapes,
            screenshot=shot.data if shot else None,
            screenshot_type=shot.mime_type if shot else SCREENSHOT_TYPE_JPEG,
            user_changes=[dict(c) for c in (reply.user_changes or [])] if reply else [],
            degraded=degraded,
            source_identity=got.identity,
            source="degraded" if degraded else "fetched",
        )


# RPC errors that mean the browser was too slow, not that the request could not be made.
_LATE_RPC_CODES = frozenset(
    {rtc.RpcError.ErrorCode.RESPONSE_TIMEOUT, rtc.RpcError.ErrorCode.CONNECTION_TIMEOUT}
)


def _retryable(err: BaseException) -> bool:
    return isinstance(err, ContextFailure) and not isinstance(err, ContextRefused | ContextLate)


def _current_cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
