"""Prefetching the host's context on composing hints: single flight, TTLs, invalidation, the
grant check and the room's rate limit. The host is a plain fake of `perform_rpc` that feeds
the stream inbox directly."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from steward.protocol import ProtocolError, decode
from steward.protocol.box import Box
from steward.protocol.limits import MAX_ENVELOPE_BYTES
from steward.protocol.messages import ComposingHint
from steward.protocol.names import TOPIC_COMPOSING
from steward.room.context.composing import ComposingHints
from steward.room.context.views import ParticipantView
from steward.room.participants import Member, Participants
from tests.support.context_rigs import WEBP, FetchRig


def _view(viewport: Box) -> ParticipantView:
    return ParticipantView(viewport, (), 0.0)


@pytest.fixture
async def rig() -> FetchRig:
    return FetchRig()


async def test_a_prompt_after_a_prefetch_uses_it_without_a_second_rpc(rig: FetchRig) -> None:
    await rig.prefetched()
    assert len(rig.host.calls) == 1
    ctx = await rig.fetcher.fetch()
    assert ctx.source == "prefetched" and ctx.screenshot == WEBP and not ctx.degraded
    assert ctx.screenshot_type == "image/webp"
    assert ctx.source_identity == "alice" and ctx.shapes[0]["id"] == "a"
    assert len(rig.host.calls) == 1
    assert rig.fetcher.cache.prefetch_stats == {"started": 1, "ok": 1, "failed": 0, "served": 1}


async def test_a_fetch_joins_a_prefetch_in_flight_and_prefetches_are_single_flight(
    rig: FetchRig,
) -> None:
    rig.host.gate = asyncio.Event()
    assert rig.fetcher.prefetch() == "started"
    assert rig.fetcher.prefetch() == "in_flight"
    fetch = asyncio.ensure_future(rig.fetcher.fetch())
    await asyncio.sleep(0.01)
    assert not fetch.done()
    rig.host.gate.set()
    ctx = await fetch
    assert ctx.source == "prefetched"
    assert len(rig.host.calls) == 1


async def test_no_prefetch_while_a_fetch_of_the_same_key_is_loading(rig: FetchRig) -> None:
    rig.host.gate = asyncio.Event()
    fetch = asyncio.ensure_future(rig.fetcher.fetch())
    await asyncio.sleep(0.01)
    assert rig.fetcher.prefetch() == "in_flight"
    rig.host.gate.set()
    assert (await fetch).source == "fetched"
    assert rig.fetcher.prefetch() == "cached"
    assert len(rig.host.calls) == 1


async def test_prefetched_answers_live_longer_than_fetched_ones(rig: FetchRig) -> None:
    await rig.prefetched()
    rig.now += 10  # past the 2 s cache, inside the 15 s prefetch TTL
    assert (await rig.fetcher.fetch()).source == "prefetched"
    rig.now += 6  # 16 s after the prefetch
    assert (await rig.fetcher.fetch()).source == "fetched"
    assert len(rig.host.calls) == 2
    rig.now += 3  # an ordinary fetch is only cached for 2 s
    assert (await rig.fetcher.fetch()).source == "fetched"
    assert (await rig.fetcher.fetch()).source == "cached"
    assert len(rig.host.calls) == 3


async def test_any_room_change_or_other_bounds_invalidate_a_prefetch(rig: FetchRig) -> None:
    await rig.prefetched()
    box = Box(x=10, y=10, w=400, h=300)
    assert (await rig.fetcher.fetch(bounds=box)).source == "fetched"
    assert len(rig.host.calls) == 2
    rig.version += 1  # an envelope (e.g. a relayed user edit) went to the room
    await rig.prefetched(box)  # the answer cached for these bounds is void now
    rig.version += 1
    assert (await rig.fetcher.fetch(bounds=box)).source == "fetched"
    assert len(rig.host.calls) == 4


async def test_an_answer_racing_a_room_change_is_never_cached(rig: FetchRig) -> None:
    rig.host.gate = asyncio.Event()
    assert rig.fetcher.prefetch() == "started"
    await asyncio.sleep(0.01)
    rig.version += 1  # changed while the host was answering
    rig.host.gate.set()
    for task in list(rig.fetcher.cache.prefetches):
        await task
    rig.host.gate = None
    assert (await rig.fetcher.fetch()).source == "fetched"
    assert len(rig.host.calls) == 2


async def test_the_host_moving_its_camera_invalidates_a_view_relative_prefetch(
    rig: FetchRig,
) -> None:
    await rig.prefetched()
    rig.fetcher.cache.viewport_changed("alice", _view(Box(x=0, y=0, w=1280, h=800)))  # unchanged
    rig.fetcher.cache.viewport_changed("bob", _view(Box(x=500, y=0, w=1280, h=800)))  # not the host
    assert rig.fetcher.prefetch() == "cached"
    rig.fetcher.cache.viewport_changed("alice", _view(Box(x=500, y=0, w=1280, h=800)))
    assert rig.fetcher.prefetch() == "started"


async def test_a_failed_prefetch_raises_nothing_and_is_not_a_degraded_run(rig: FetchRig) -> None:
    rig.host.fail = True
    await rig.prefetched()
    assert rig.fetcher.cache.prefetch_stats["failed"] == 1 and rig.fetcher.degraded_runs == 0
    rig.host.fail = False
    ctx = await rig.fetcher.fetch()  # the prompt fetches on its own
    assert ctx.source == "fetched" and not ctx.degraded
    assert rig.fetcher.degraded_runs == 0


async def test_no_prefetch_without_a_capable_host() -> None:
    rig = FetchRig(host=False)
    assert rig.fetcher.prefetch() == "no_host"
    assert rig.fetcher.cache.prefetches == [] and rig.host.calls == []


async def test_close_stops_a_running_prefetch(rig: FetchRig) -> None:
    rig.host.gate = asyncio.Event()
    assert rig.fetcher.prefetch() == "started"
    await asyncio.sleep(0.01)
    await rig.fetcher.close()
    assert rig.fetcher.cache.prefetches == []


# --- the hint message --------------------------------------------------------------------
def test_composing_hint_decodes_and_refuses_bad_payloads() -> None:
    ok = decode(ComposingHint, b'{"ts": 1.5}', topic=TOPIC_COMPOSING, max_bytes=MAX_ENVELOPE_BYTES)
    assert isinstance(ok, ComposingHint) and ok.bounds is None
    with_box = decode(
        ComposingHint,
        b'{"bounds": {"x": 1, "y": 2, "w": 3, "h": 4}, "ts": 2}',
        topic=TOPIC_COMPOSING,
        max_bytes=MAX_ENVELOPE_BYTES,
    )
    assert isinstance(with_box, ComposingHint) and with_box.bounds == Box(x=1, y=2, w=3, h=4)
    for bad, kind in [
        (b"{", "invalid_json"),
        (b'{"bounds": null}', "schema"),  # ts missing
        (b'{"ts": 1, "message": "draw"}', "schema"),  # no extra fields
        (b'{"ts": 1, "bounds": {"x": 0, "y": 0, "w": -1, "h": 1}}', "schema"),
        (b'{"ts": "NaN"}', "schema"),
        (b'{"ts": 1, "pad": "' + b"x" * MAX_ENVELOPE_BYTES + b'"}', "oversize"),
    ]:
        err = decode(ComposingHint, bad, topic=TOPIC_COMPOSING, max_bytes=MAX_ENVELOPE_BYTES)
        assert isinstance(err, ProtocolError) and err.kind == kind, (bad[:40], err)


# --- grant check and rate limit ----------------------------------------------------------
class HintRig:
    def __init__(self, rig: FetchRig) -> None:
        self.rig = rig
        self.now = 0.0
        self.rejected: list[tuple[str, str, str]] = []
        self.allowed = {"alice"}
        self.hints = ComposingHints(
            "room",
            rig.participants,
            rig.fetcher,
            self.may_prompt,
            lambda topic, sender, reason, detail="": self.rejected.append((topic, sender, reason)),
            min_interval_s=1.0,
            clock=lambda: self.now,
        )

    def may_prompt(self, member: Member) -> bool:
        return member.identity in self.allowed


HINT = ComposingHint(ts=1.0)


async def test_only_participants_allowed_to_prompt_trigger_a_prefetch(rig: FetchRig) -> None:
    h = HintRig(rig)
    assert h.hints.hint("bob", HINT) == "refused"
    assert h.hints.hint("mallory", HINT) == "refused"  # not in the room at all
    assert h.rejected == [
        (TOPIC_COMPOSING, "bob", "not_allowed"),
        (TOPIC_COMPOSING, "mallory", "not_allowed"),
    ]
    assert rig.host.calls == [] and rig.fetcher.cache.prefetch_stats["started"] == 0
    assert h.hints.hint("alice", HINT) == "started"


async def test_at_most_one_prefetch_per_room_per_interval_extra_hints_counted(
    rig: FetchRig,
) -> None:
    h = HintRig(rig)
    h.allowed.add("bob")
    assert h.hints.hint("alice", HINT) == "started"
    h.now = 0.4
    box = ComposingHint(bounds=Box(x=0, y=0, w=10, h=10), ts=2.0)
    assert h.hints.hint("bob", box) == "dropped"  # another sender, same room
    assert h.hints.hint("alice", box) == "dropped"
    h.now = 1.1
    assert h.hints.hint("bob", box) == "started"
    assert h.hints.counts == {"started": 2, "dropped": 2}
    assert h.rejected == []  # dropped hints are not errors


async def test_hints_that_find_the_context_ready_do_not_use_the_budget(rig: FetchRig) -> None:
    h = HintRig(rig)
    await rig.prefetched(asker="alice")  # a prefetch is the context of one asker
    assert h.hints.hint("alice", HINT) == "cached"
    h.now = 0.1
    box = ComposingHint(bounds=Box(x=0, y=0, w=10, h=10), ts=2.0)
    assert h.hints.hint("alice", box) == "started"


async def test_a_speaking_participant_allowed_to_prompt_prefetches_quietly(rig: FetchRig) -> None:
    h = HintRig(rig)
    assert h.hints.on_voice("bob") == "refused"
    assert h.rejected == []  # interim segments of voice agents are not rejections
    assert h.hints.on_voice("alice") == "started"
    assert rig.fetcher.cache.prefetches
    await rig.fetcher.close()


async def test_a_transcription_stream_starting_calls_the_speaking_hook() -> None:
    from steward.room.inbound.intake import Intake

    spoke: list[str] = []

    class Reader:
        info = SimpleNamespace(attributes={"lk.transcription_final": "false"})

        def __aiter__(self) -> Reader:
            return self

        async def __anext__(self) -> str:
            raise StopAsyncIteration

    async def start(_prompt: Any) -> str:
        raise AssertionError("an interim segment is not a prompt")

    intake = Intake("room", Participants(), start, lambda *_: False, on_speaking=spoke.append)
    intake.on_transcription(Reader(), "voice-agent")  # type: ignore[arg-type]
    assert spoke == ["voice-agent"]
    await intake.transcriptions_read()


async def test_the_cache_keeps_only_the_newest_answers(rig: FetchRig) -> None:
    from steward.room.context.snapshot_cache import MAX_CACHED

    boxes = [Box(x=i, y=0, w=100, h=100) for i in range(MAX_CACHED + 2)]
    for box in boxes:
        await rig.prefetched(box)
    assert len(rig.fetcher.cache) == MAX_CACHED
    assert rig.fetcher.prefetch(boxes[0]) == "started"  # the oldest was dropped
    assert rig.fetcher.prefetch(boxes[-1]) == "cached"
    await rig.fetcher.close()
