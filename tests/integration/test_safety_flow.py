"""What one participant sends cannot slow the others: floods on any topic, refused prompts,
hostile hosts and peers that never ack, in a real room (real livekit-server + Postgres)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from livekit import rtc
from structlog.testing import capture_logs

from steward.protocol.names import RESYNC_ALL_SESSIONS, TOPIC_RESYNC, TOPIC_SCREENSHOT
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.headless.client import Faults, HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from steward_tools.rigs.flooder import Flooders, flood
from tests.conftest import wait_for
from tests.support.room import close_all, fixed_script_steward, join_clients

pytestmark = pytest.mark.integration

STEWARD = ["canvas-steward"]
MIB = 1024 * 1024


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    async with fixed_script_steward(livekit_server, database, http=False) as service:
        yield service


def _muted(client: HeadlessClient) -> bool:
    return client.room.local_participant.permissions.can_publish_data is False


async def _timed_run(client: HeadlessClient) -> float:
    started = time.monotonic()
    reply = await client.prompt("draw our signup flow")
    assert reply.session_id and await client.wait_status(reply.session_id) == "done"
    return time.monotonic() - started


async def _quiet(read: Callable[[], object], still_s: float, timeout: float) -> None:
    """Wait until `read()` has not changed for `still_s` seconds (at most `timeout`)."""
    async with asyncio.timeout(timeout):
        last, since = read(), time.monotonic()
        while time.monotonic() - since < still_s:
            await asyncio.sleep(0.05)
            now = read()
            if now != last:
                last, since = now, time.monotonic()


# Streams on a topic the steward has no handler for, streams it refuses, and packets on
# another app's topic: none is read, all of it crosses the steward's data channel.
FLOODS = (
    ("eve", "app:files", 22, 5 * MIB, True),
    ("mal", TOPIC_SCREENSHOT, 22, 5 * MIB, True),
    ("ivy", "app:cursor", 2000, 60_000, False),
)


async def test_floods_on_any_topic_are_budgeted_and_muted_while_honest_runs_go_on(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    (ann,) = await join_clients(livekit_server, room_name, ["ann"], runtime)
    s = livekit_server
    specs = [
        flood(
            s.api_key,
            s.api_secret,
            room=room_name,
            identity=who,
            topic=t,
            count=n,
            size=b,
            stream=st,
        )
        for who, t, n, b, st in FLOODS
    ]
    # The flooders send from their own process: in this one, their SDK's chunking of
    # megabytes would share the steward's event loop and be timed as the steward's.
    flooders = await Flooders.start(s.url, STEWARD[0], specs)
    flooding = {who for who, *_ in FLOODS}
    try:
        await wait_for(lambda: all(runtime.participants.get(w) for w in flooding), timeout=20)
        baseline = min([await _timed_run(ann) for _ in range(3)])
        await flooders.go()
        # The run "during" starts once the steward has counted the flood's first bytes.
        await wait_for(lambda: any(runtime.budget.usage(w)[0] > 0 for w in flooding), timeout=20)
        during = await _timed_run(ann)
        await wait_for(lambda: flooding <= runtime.abuse.muted, timeout=20)
        sent = (await flooders.result(60))["sent"]
        # "After the attacks": once what LiveKit had already forwarded before the mute has
        # arrived (the steward stops dropping muted senders' packets), bounded.
        await _quiet(lambda: runtime.dropped_from_muted, 0.5, 30)
        # Timed as the baseline is (the best of three), so a busy machine's noise does not
        # decide the comparison.
        after = min([await _timed_run(ann) for _ in range(3)])
        print(f"baseline={baseline:.2f}s during={during:.2f}s after={after:.2f}s sent={sent}")
        # Muted at their first stream's header / the first packets past the budget, not at
        # the 21st stream: what the steward counted from each before the mute (`sent` is
        # what their clients queued before they saw it; LiveKit dropped what came after).
        counted = {who: runtime.budget.usage(who)[0] for who in flooding}
        print(f"counted before the mute: {counted}")
        # At most two streams' worth, and a little for the SDK's own small packets.
        own = 64 * 1024
        assert counted["eve"] <= 2 * 5 * MIB + own and counted["mal"] <= 2 * 5 * MIB + own, counted
        assert counted["ivy"] <= 2 * runtime.budget.bytes_per_window, counted
        # How fast the honest runs were during and after the floods is a figure of `steward
        # bench abuse` (`honest_during_flood_ratio`, `honest_latency_ratio`), not an assert:
        # on two shared cores a busy neighbour decides it. Here each of them ran and ended.
    finally:
        await flooders.close()
        await close_all([ann])


def _pasted(n: int) -> list[dict[str, Any]]:
    """`n` sticky notes with a sentence each, as the browser's relay sends them."""
    return [
        {
            "id": f"paste{i:04d}",
            "type": "note",
            "x": 40.0 * (i % 40),
            "y": 40.0 * (i // 40),
            "rotation": 0.0,
            "parentId": None,
            "props": {
                "color": "yellow",
                "size": "m",
                "text": f"Idea {i}: ask the signup team whether step {i % 7} can be skipped "
                "for invited users, and what the analytics say about drop-off there.",
            },
        }
        for i in range(n)
    ]


def _split(records: list[dict[str, Any]], max_bytes: int = 48_000) -> list[list[dict[str, Any]]]:
    """Messages of at most `max_bytes` of records each, as the browser splits an edit."""
    out: list[list[dict[str, Any]]] = [[]]
    size = 0
    for r in records:
        n = len(json.dumps(r))
        if out[-1] and size + n > max_bytes:
            out.append([])
            size = 0
        out[-1].append(r)
        size += n
    return out


async def test_a_large_honest_paste_is_relayed_without_a_strike(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    """The burst allowance mutes floods in a fraction of a second; a paste of 1,500
    notes, all sent at once as a browser does, is under it."""
    runtime = await steward.join(room_name)
    ann, bob = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
    try:
        paste = _pasted(1500)
        messages = _split(paste)
        for records in messages:
            await ann.edit(records)
        await wait_for(lambda: len(bob.shapes) >= len(paste), timeout=30)
        sent, packets = runtime.budget.usage("ann")
        print(f"paste: {len(paste)} notes, {len(messages)} messages, {sent} bytes counted")
        assert sent >= 380_000 and packets >= len(messages), (sent, packets)
        assert runtime.abuse.strikes("ann") == 0
        assert "ann" not in runtime.abuse.muted and not _muted(ann)
        assert not [r for r in runtime.rejected if r[1] == "ann"], runtime.rejected
    finally:
        await close_all([ann, bob])


async def test_refused_prompts_are_rate_limited_strikes_with_sampled_log_lines(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    (ann,) = await join_clients(livekit_server, room_name, ["ann"], runtime)
    (mal,) = await join_clients(livekit_server, room_name, ["mal"], runtime, can_prompt=False)
    try:
        refused = 0
        with capture_logs() as logs:
            for _ in range(400):
                if _muted(mal):
                    break
                try:
                    async with asyncio.timeout(2):
                        reply = await mal.prompt("draw our signup flow")
                except (TimeoutError, rtc.RpcError):
                    continue  # muted meanwhile: the RPC no longer leaves or is answered
                # Outside any suppressor: an accepted prompt without the grant fails here.
                assert reply.session_id is None, reply
                refused += 1
            await wait_for(lambda: _muted(mal), timeout=10)
        lines = [e for e in logs if e["event"] == "prompt_refused" and e["participant"] == "mal"]
        print(f"refused={refused} lines={len(lines)}")
        assert "mal" in runtime.abuse.muted
        assert refused <= 60, refused  # muted long before 400
        assert refused >= 20 and len(lines) <= 10, lines  # not one line each
        assert sum(e["count"] for e in lines) <= refused, lines
        assert any("rate limit" in e["reason"] for e in lines)
        assert await _timed_run(ann) < 10
    finally:
        await close_all([ann, mal])


async def test_a_late_host_is_asked_last_and_loses_the_role_despite_honest_answers(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    faults = {"hostile": Faults(context_mode="hang", honest_every=3)}
    hostile, ann = await join_clients(
        livekit_server, room_name, ["hostile", "ann"], runtime, faults=faults
    )
    # Bob's browser offers no context: his runs' context comes from the host, or from ann.
    (bob,) = await join_clients(
        livekit_server, room_name, ["bob"], runtime, capabilities=("apply",)
    )
    try:
        assert runtime.participants.host == "hostile"
        took, asked = [], []
        for _ in range(5):
            before = hostile.stats.context_requests
            took.append(await _timed_run(bob))
            asked.append(hostile.stats.context_requests - before)
        print(f"took={[round(t, 2) for t in took]} asked={asked} host={runtime.participants.host}")
        # Asked once in all: a late answer makes her the last resort for a while (the run's
        # next look and the next runs go to ann first), and the host role moves to ann.
        assert sum(asked) == 1, asked
        assert runtime.participants.host == "ann"
        assert "hostile" in runtime.participants.avoided()
        timeout = runtime.snapshots.timeout_s
        assert max(took) < 2 * timeout + 2.0, took
        assert runtime.snapshots.degraded_runs == 0
    finally:
        await close_all([hostile, ann, bob])


def _replays_to(logs: list[dict[str, object]], who: str) -> int:
    return sum(1 for e in logs if e["event"] == "resynced" and e["participant"] == who)


async def test_a_participant_that_never_acks_is_resynced_once_and_not_retransmitted_to(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    faults = {"nacker": Faults(never_ack=True)}
    ann, nacker = await join_clients(
        livekit_server, room_name, ["ann", "nacker"], runtime, faults=faults
    )
    try:
        with capture_logs() as logs:
            first = await ann.prompt("draw our signup flow")
            assert first.session_id and await ann.wait_status(first.session_id) == "done"
            sid = first.session_id
            # Its retransmits run out, then one replay.
            await wait_for(lambda: runtime.broadcaster.stats(sid).resyncs >= 1, timeout=30)
            later = []
            for _ in range(2):
                reply = await ann.prompt("draw our signup flow")
                assert reply.session_id and await ann.wait_status(reply.session_id) == "done"
                later.append(reply.session_id)
            for _ in range(4):  # whole-room resyncs, as many as the rate limit allows
                payload = {"sessionId": RESYNC_ALL_SESSIONS, "lastSeq": 0}
                await nacker.send_raw(json.dumps(payload).encode(), TOPIC_RESYNC)
            # Each withheld (now), or replayed (as the steward once did: the test fails).
            await wait_for(
                lambda: (
                    sum(1 for t, w, _ in runtime.rejected if (t, w) == (TOPIC_RESYNC, "nacker"))
                    >= 4
                    or _replays_to(logs, "nacker") >= 3
                ),
                timeout=15,
            )
            # The window must have passed, not merely been slept through: run the
            # broadcaster's retransmit pass ourselves, each pass at least one retransmit
            # timeout after the previous one (load only makes them later), so every envelope
            # nacker holds is overdue several times over when the last pass has run.
            broadcaster = runtime.broadcaster
            for _ in range(broadcaster.retransmit_attempts + 2):
                await asyncio.sleep(broadcaster.retransmit_after_s)
                await broadcaster.retransmit_due()
        replays = _replays_to(logs, "nacker")
        retransmits = [runtime.broadcaster.stats(s).retransmits for s in later]
        print(f"replays={replays} retransmits={retransmits} got={nacker.stats.envelopes_received}")
        assert replays <= 1, replays
        assert retransmits == [0, 0], retransmits
        # Acking lifts it: ann, who acks, is resynced whenever she asks.
        await ann.send_raw(json.dumps({"sessionId": sid, "lastSeq": 0}).encode(), TOPIC_RESYNC)
        await wait_for(lambda: runtime.broadcaster.stats(sid).resyncs >= 2, timeout=10)
    finally:
        await close_all([ann, nacker])
