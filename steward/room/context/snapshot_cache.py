"""Recent context answers and the prefetches in flight, for one room.

An answer is kept for a short while keyed by (asker, docVersion, bounds, screenshot wanted),
and only while nothing was sent to the room since its fetch started. A prefetch (started on a
`steward:composing` hint) is kept longer, and a fetch for the same key joins it while it runs.
A browser that publishes a new viewport or selection makes the answers made for it stale.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, replace
from typing import Any

from steward.obs.logging import get_logger
from steward.ports import CanvasSnapshot, SnapshotSource
from steward.protocol.box import Box
from steward.room.context.views import ParticipantView

log = get_logger(__name__)

# Cached answers per room (different bounds, e.g. hints while the user pans).
MAX_CACHED = 8

# (asker or "", bounds as JSON or "", want_screenshot, the room's order counter at start)
FlightKey = tuple[str, str, bool, int]
# (asker or "", docVersion, bounds as JSON or "", want_screenshot)
_CacheKey = tuple[str, int, str, bool]
# The asker's viewport and selection an answer was made for.
AskerView = tuple[Box, tuple[str, ...]]


@dataclass
class _Entry:
    context: CanvasSnapshot
    at: float
    room_version: int
    ttl_s: float
    prefetched: bool = False
    view: AskerView | None = None  # None: not known
    # Browser-reported user changes go to the first request served only.
    changes_served: bool = False


class SnapshotCache:
    """A room's recent context answers and prefetches in flight, valid while nothing was sent to the
    room."""

    def __init__(
        self,
        room_id: str,
        room_version: Callable[[], int],
        *,
        ttl_s: float,
        prefetch_ttl_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.room_id = room_id
        self._room_version = room_version
        self.ttl_s = ttl_s
        self.prefetch_ttl_s = prefetch_ttl_s
        self._clock = clock
        self._entries: dict[_CacheKey, _Entry] = {}
        # Single flight per key: running prefetches (joined by a fetch), and keys a fetch of
        # its own is loading (a prefetch for them would only duplicate it).
        self._prefetching: dict[FlightKey, asyncio.Task[CanvasSnapshot | None]] = {}
        self._fetching: dict[FlightKey, int] = {}
        self.prefetch_stats = {"started": 0, "ok": 0, "failed": 0, "served": 0}

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def prefetches(self) -> list[asyncio.Task[CanvasSnapshot | None]]:
        """The prefetches running now."""
        return list(self._prefetching.values())

    def flight_key(self, bounds: Box | None, shot: bool, asker: str | None) -> FlightKey:
        return (asker or "", _bounds_key(bounds), shot, self._room_version())

    def lookup(
        self, bounds: Box | None, shot: bool, asker: str | None, *, peek: bool = False
    ) -> CanvasSnapshot | None:
        """A fresh answer for the key, or None. Unless `peek`, the answer is served: its
        browser-reported changes go to this caller and no later one."""
        entry = self._entry(bounds, shot, asker)
        if entry is None:
            return None
        if peek:
            return entry.context
        source: SnapshotSource = "prefetched" if entry.prefetched else "cached"
        changes = [] if entry.changes_served else list(entry.context.user_changes)
        entry.changes_served = True
        return replace(
            entry.context, shapes=list(entry.context.shapes), user_changes=changes, source=source
        )

    def _entry(self, bounds: Box | None, shot: bool, asker: str | None) -> _Entry | None:
        now, version = self._clock(), self._room_version()
        for key, entry in list(self._entries.items()):
            if now - entry.at > entry.ttl_s or entry.room_version != version:
                del self._entries[key]
        for key, entry in self._entries.items():
            if key == _key(asker, entry.context.doc_version, bounds, shot):
                return entry
        return None

    def store(
        self,
        context: CanvasSnapshot,
        key: FlightKey,
        bounds: Box | None,
        asker: str | None,
        view: AskerView | None,
        *,
        prefetched: bool,
    ) -> None:
        """Keyed to the room's order counter when the fetch *started* (in `key`): anything
        sent to the room while it ran may or may not be in the answer, so such an answer is
        never used."""
        shot, room_version = key[2], key[3]
        cache_key = _key(asker, context.doc_version, bounds, shot)
        self._entries.pop(cache_key, None)
        self._entries[cache_key] = _Entry(
            context,
            self._clock(),
            room_version,
            self.prefetch_ttl_s if prefetched else self.ttl_s,
            prefetched,
            view,
            changes_served=not prefetched,  # a fetch's own caller has just taken them
        )
        while len(self._entries) > MAX_CACHED:  # each holds a screenshot: keep the newest few
            del self._entries[next(iter(self._entries))]

    def busy(self, key: FlightKey) -> bool:
        """A prefetch or a fetch is loading `key` now."""
        return key in self._prefetching or key in self._fetching

    @contextlib.contextmanager
    def fetching(self, key: FlightKey) -> Iterator[None]:
        """Marks `key` as being loaded by a fetch while the block runs."""
        self._fetching[key] = self._fetching.get(key, 0) + 1
        try:
            yield
        finally:
            self._fetching[key] -= 1
            if not self._fetching[key]:
                del self._fetching[key]

    def start_prefetch(
        self, key: FlightKey, load: Coroutine[Any, Any, CanvasSnapshot | None]
    ) -> None:
        task = asyncio.ensure_future(load)
        self._prefetching[key] = task

        def done(t: asyncio.Task[CanvasSnapshot | None]) -> None:
            if self._prefetching.get(key) is t:
                del self._prefetching[key]
            if not t.cancelled() and t.exception() is not None:  # the load catches; be sure
                log.error("context_prefetch_crashed", room=self.room_id, error=repr(t.exception()))

        task.add_done_callback(done)
        self.prefetch_stats["started"] += 1

    async def join(
        self, key: FlightKey, bounds: Box | None, asker: str | None
    ) -> CanvasSnapshot | None:
        """The answer of the prefetch running for `key` (None: none runs, or it found none)."""
        flight = self._prefetching.get(key)
        if flight is None:
            return None
        # Shielded: a cancelled session must not cancel a prefetch others may join.
        joined = await asyncio.shield(flight)
        if joined is None:
            return None
        self.prefetch_stats["served"] += 1
        # The first to join takes its browser-reported changes; later ones do not.
        entry = self._entry(bounds, key[2], asker)
        served = entry is not None and entry.context is joined and entry.changes_served
        if entry is not None and entry.context is joined:
            entry.changes_served = True
        changes = [] if served else list(joined.user_changes)
        return replace(
            joined, shapes=list(joined.shapes), user_changes=changes, source="prefetched"
        )

    def viewport_changed(self, identity: str, view: ParticipantView) -> None:
        """A browser published a new viewport or selection (`canvas:viewport`).

        Answers made for that asker no longer hold when its selection changed, or, without
        bounds, when its camera moved. An answer for no asker that this browser gave for its
        own view (no bounds) no longer shows what a prompt without bounds would get."""
        for key, entry in list(self._entries.items()):
            asker, bounds = key[0], key[2]
            seen = entry.view
            if asker == identity and (seen is None or seen[1] != view.selection):
                stale = True
            elif asker == identity and seen is not None:
                stale = bounds == "" and not _same_box(seen[0], view.viewport)
            else:
                stale = (
                    asker == ""
                    and bounds == ""
                    and entry.context.source_identity == identity
                    and not _same_box(entry.context.viewport, view.viewport)
                )
            if stale:
                del self._entries[key]

    async def close(self) -> None:
        """Stop running prefetches (the room is closing)."""
        tasks = self.prefetches
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task


def view_for(
    context: CanvasSnapshot, asker: str | None, view: ParticipantView | None
) -> AskerView | None:
    """The asker's viewport and selection an answer was made for: its own browser's reply,
    else what it had published when the fetch started."""
    if asker is not None and context.source_identity == asker:
        return context.viewport, tuple(context.selection)
    return (view.viewport, view.selection) if view is not None else None


def _bounds_key(bounds: Box | None) -> str:
    # As floats: a box made of ints and the same box read from JSON are one key.
    return ",".join(repr(float(v)) for v in bounds.to_dict().values()) if bounds else ""


def _key(asker: str | None, doc_version: int, bounds: Box | None, shot: bool) -> _CacheKey:
    return (asker or "", doc_version, _bounds_key(bounds), shot)


def _same_box(a: Box, b: Box, tolerance: float = 0.5) -> bool:
    return all(abs(u - v) <= tolerance for u, v in ((a.x, b.x), (a.y, b.y), (a.w, b.w), (a.h, b.h)))
