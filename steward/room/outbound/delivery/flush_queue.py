"""Envelopes numbered, encoded once and applied to the mirror, waiting for the room's flush.

One flush task per room takes everything queued, persists it (one multi-row INSERT) and hands
it over; sends queued while it runs, or in the same loop turn, make its next round. A sender
may wait for its envelope's flush (`flushed`) or not: the error of a flush nobody waited for
is kept and raised by the session's next send or flush (`raise_failed`). What was not
persisted is reported once (`on_unsent`) and every waiter of it gets the error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from steward.store.outbox import OutboxRow


@dataclass
class Queued:
    """One envelope ready to go: its numbers, encoded payload, and the future of whoever waits for
    its flush."""

    session_id: str
    seq: int
    room_order: int
    partial: bool
    payload: bytes
    actions: int
    # Set when a caller waits for this envelope's flush; `flushed` once it is over.
    done: asyncio.Future[None] | None = None
    flushed: bool = False

    def row(self) -> OutboxRow:
        return OutboxRow(
            self.session_id, self.seq, self.room_order, self.partial, self.payload.decode()
        )


Step = Callable[[list[Queued]], Awaitable[None]]


class FlushQueue:
    """The envelopes waiting for the room's flush, and the one task that persists and hands them
    over in order."""

    def __init__(
        self,
        persist: Step,
        hand_over: Step,
        on_unsent: Callable[[list[Queued], BaseException], None],
        spawn: Callable[[Awaitable[None]], asyncio.Task[None]],
    ) -> None:
        self._persist = persist
        self._hand_over = hand_over
        self._on_unsent = on_unsent
        self._spawn = spawn
        self._items: list[Queued] = []
        # The last envelope queued: waiting for it waits for everything before it.
        self.tail: Queued | None = None
        self._flusher: asyncio.Task[None] | None = None
        # session → the error of a flush of its envelopes that nobody waited for.
        self._failed: dict[str, BaseException] = {}

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: Queued) -> None:
        self._items.append(item)
        self.tail = item
        if self._flusher is None:  # its first step runs after this loop turn's other sends
            self._flusher = self._spawn(self._run())

    async def flushed(self, item: Queued) -> None:
        """Wait until `item` is persisted and handed over; raises what its flush failed with."""
        if item.flushed:
            return
        if item.done is None:
            item.done = asyncio.get_running_loop().create_future()
            # Retrieved even when its waiter was cancelled, so asyncio never warns about it.
            item.done.add_done_callback(lambda f: f.cancelled() or f.exception())
        await asyncio.shield(item.done)

    def raise_failed(self, session_id: str) -> None:
        """Raise what a flush of the session's envelopes nobody waited for failed with."""
        err = self._failed.pop(session_id, None)
        if err is not None:
            raise err

    async def drain(self, timeout_s: float) -> None:
        """Let the running flush persist and hand over what is queued, for up to `timeout_s`."""
        if self._flusher is not None:
            await asyncio.wait([self._flusher], timeout=timeout_s)

    async def _run(self) -> None:
        """Until the queue is empty: take all of it, persist it, hand it over in order."""
        chunk: list[Queued] = []
        try:
            while self._items:
                chunk, self._items = self._items, []
                try:
                    await self._persist(chunk)
                except Exception as err:
                    failed, chunk, self._items = chunk + self._items, [], []
                    self._fail(failed, err)
                    continue
                await self._hand_over(chunk)
                _settle(chunk)
                chunk = []
        except BaseException as err:  # closed, or a bug: no sender may wait forever
            closed = isinstance(err, asyncio.CancelledError)
            self._fail(chunk + self._items, RuntimeError("broadcaster closed") if closed else err)
            self._items = []
            raise
        finally:
            self._flusher = None

    def _fail(self, failed: list[Queued], err: BaseException) -> None:
        if not failed:
            return
        self._on_unsent(failed, err)
        waited = {q.session_id for q in failed if q.done is not None}
        for session_id in {q.session_id for q in failed} - waited:
            self._failed[session_id] = err
        _settle(failed, err)


def _settle(chunk: list[Queued], err: BaseException | None = None) -> None:
    for q in chunk:
        q.flushed = True
        if q.done is not None and not q.done.done():
            if err is None:
                q.done.set_result(None)
            else:
                q.done.set_exception(err)
