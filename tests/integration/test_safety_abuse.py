"""Storage, memory and delivery under abuse, in a real room (real livekit-server + Postgres)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from steward.protocol.names import (
    TOPIC_ACK,
    TOPIC_CONTEXT,
    TOPIC_RESYNC,
    TOPIC_SCREENSHOT,
    TOPIC_TRANSCRIPTION,
)
from steward.room.context.snapshot_fetcher import DEMOTE_AFTER
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.headless.client import Faults
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.room import close_all, fixed_script_steward, join_clients

pytestmark = pytest.mark.integration


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[StewardService]:
    async with fixed_script_steward(livekit_server, database, http=False) as service:
        yield service


async def _acks_written(database: Database, participant: str) -> int:
    await_rows = await database.pool.fetchval(
        "SELECT count(*) FROM acks WHERE participant = $1", participant
    )
    return int(await_rows)


async def test_bogus_acks_are_dropped_unwritten_and_the_flooder_loses_data_rights(
    steward: StewardService, livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    ann, mallory = await join_clients(livekit_server, room_name, ["ann", "mallory"], runtime)
    try:
        ok = await ann.prompt("draw our signup flow")
        assert ok.session_id and await ann.wait_status(ok.session_id) == "done"
        last = runtime.broadcaster.stats(ok.session_id).last_seq
        with capture_logs() as logs:
            for i in range(300):
                fake = {"sessionId": f"s-never-{i}", "seq": 1, "applied": [], "appliedAt": 1.0}
                await mallory.send_raw(json.dumps(fake).encode(), TOPIC_ACK)
            beyond = {"sessionId": ok.session_id, "seq": last + 5, "applied": [], "appliedAt": 1}
            await mallory.send_raw(json.dumps(beyond).encode(), TOPIC_ACK)
            await wait_for(
                lambda: mallory.room.local_participant.permissions.can_publish_data is False
            )
        await runtime.broadcaster.flush_acks()
        reasons = {r for t, who, r in runtime.rejected if who == "mallory" and t == TOPIC_ACK}
        assert "unknown_session" in reasons
        assert any(
            e["event"] == "participant_muted" and e["participant"] == "mallory" for e in logs
        )
        # Her acks of what she really was sent were written; none of the bogus ones.
        rows = await database.pool.fetch(
            "SELECT session_id, seq FROM acks WHERE participant = 'mallory'"
        )
        assert rows and {r["session_id"] for r in rows} == {ok.session_id}
        assert max(r["seq"] for r in rows) <= last
        (view,) = await steward.rooms_overview(room_name)
        assert {p["identity"]: p["muted"] for p in view["participants"]} == {
            "ann": False,
            "mallory": True,
        }
        again = await ann.prompt("draw our signup flow")
        assert again.session_id and await ann.wait_status(again.session_id) == "done"
        # Leaving and rejoining with a fresh token does not lift the mute.
        await mallory.disconnect()
        await wait_for(lambda: runtime.participants.get("mallory") is None)
        with capture_logs() as logs:
            (mallory,) = await join_clients(livekit_server, room_name, ["mallory"], runtime)
            await wait_for(
                lambda: mallory.room.local_participant.permissions.can_publish_data is False
            )
        assert any(e.get("last_reason") == "rejoined_while_muted" for e in logs)
    finally:
        await close_all([ann, mallory])


async def test_unsolicited_streams_of_either_kind_are_refused_unread(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    ann, eve = await join_clients(livekit_server, room_name, ["ann", "eve"], runtime)
    lp = eve.room.local_participant
    to = ["canvas-steward"]
    try:
        with capture_logs() as logs:
            for topic in (TOPIC_SCREENSHOT, TOPIC_CONTEXT, TOPIC_ACK):
                await lp.send_text("x" * 2_000, topic=topic, destination_identities=to)
            # Each kind refused for what it is: together under the allowance for what the
            # steward never reads (over it, eve would be muted and her later streams closed
            # as a muted sender's).
            for topic in (TOPIC_ACK, TOPIC_TRANSCRIPTION, TOPIC_RESYNC, TOPIC_SCREENSHOT):
                await lp.send_bytes(b"\0" * 2_000, topic=topic, destination_identities=to)
            await wait_for(
                lambda: (
                    sum(1 for _, w, r in runtime.rejected if (w, r) == ("eve", "unexpected_stream"))
                    >= 7
                )
            )
        refused = [
            e for e in logs if e["event"] == "inbound_rejected" and e["participant"] == "eve"
        ]
        topics = {(e["topic"], e["detail"]) for e in refused}
        assert (TOPIC_SCREENSHOT, "text stream") in topics
        assert (TOPIC_CONTEXT, "text stream") in topics
        assert (TOPIC_TRANSCRIPTION, "byte stream") in topics
        assert (TOPIC_SCREENSHOT, "") in topics  # a byte stream nobody asked for
        ok = await ann.prompt("draw our signup flow")
        assert ok.session_id and await ann.wait_status(ok.session_id) == "done"
    finally:
        await close_all([ann, eve])


async def test_a_screenshot_over_the_asked_budget_is_cut_off(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    faults = {"host": Faults(context_mode="oversized_screenshot")}
    (host,) = await join_clients(livekit_server, room_name, ["host"], runtime, faults=faults)
    try:
        ok = await host.prompt("draw our signup flow")
        assert ok.session_id and await host.wait_status(ok.session_id) == "done"
        over = [r for t, w, r in runtime.rejected if (t, w) == (TOPIC_SCREENSHOT, "host")]
        assert "oversize" in over
        # Not retried at the same browser: one request per fetch, then a text-only run.
        assert host.stats.context_requests == 1
        assert runtime.snapshots.degraded_runs == 1
    finally:
        await close_all([host])


async def test_a_gzip_bomb_is_refused_once_and_its_host_demoted_at_once(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    faults = {"bomber": Faults(context_mode="gzip_bomb")}
    bomber, ann = await join_clients(
        livekit_server, room_name, ["bomber", "ann"], runtime, faults=faults
    )
    try:
        assert runtime.participants.host == "bomber"
        took = []
        for _ in range(DEMOTE_AFTER):
            started = time.monotonic()
            reply = await bomber.prompt("draw our signup flow")
            assert reply.session_id and await bomber.wait_status(reply.session_id) == "done"
            took.append(time.monotonic() - started)

        def refused(reason: str) -> int:
            return sum(
                1 for t, w, r in runtime.rejected if (t, w, r) == (TOPIC_CONTEXT, "bomber", reason)
            )

        # Once per fetch, never retried: one refusal per context request the bomber got
        # (`late_stream` for a prefetch given up on; a refusal may be logged after its run).
        def answered() -> int:
            return refused("oversize") + refused("late_stream")

        await wait_for(lambda: answered() >= bomber.stats.context_requests)
        assert answered() == bomber.stats.context_requests
        # Asked once in all: the bomb refused demotes her at once (or, on a slow machine,
        # her streams late make her the last resort); every later look goes to ann.
        assert bomber.stats.context_requests == 1, bomber.stats.context_requests
        assert refused("oversize") == 0 or "bomber" in runtime.participants.demoted()
        assert max(took) < 5.0, took
        # The next prompt's context comes from ann at once.
        assert runtime.participants.host == "ann"
        before = bomber.stats.context_requests
        reply = await bomber.prompt("draw our signup flow")
        assert reply.session_id and await bomber.wait_status(reply.session_id) == "done"
        assert bomber.stats.context_requests == before
        assert runtime.snapshots.degraded_runs == 0 or ann.stats.context_requests >= 1
    finally:
        await close_all([bomber, ann])


async def test_endless_whole_room_resyncs_are_rate_limited(
    steward: StewardService, livekit_server: LiveKitServer, room_name: str
) -> None:
    runtime = await steward.join(room_name)
    ann, eve = await join_clients(livekit_server, room_name, ["ann", "eve"], runtime)
    try:
        ok = await ann.prompt("draw our signup flow")
        assert ok.session_id and await ann.wait_status(ok.session_id) == "done"
        with capture_logs() as logs:
            for _ in range(20):
                await eve.send_raw(
                    json.dumps({"sessionId": "*", "lastSeq": 0}).encode(), TOPIC_RESYNC
                )
            # Refused for the rate, or withheld until she acks the replay she was sent.
            await wait_for(
                lambda: (
                    sum(
                        1
                        for t, w, r in runtime.rejected
                        if (t, w) == (TOPIC_RESYNC, "eve")
                        and r in ("rate_limited", "unacked_resync")
                    )
                    >= 16
                )
            )
        replays = [e for e in logs if e["event"] == "resynced" and e["participant"] == "eve"]
        assert len(replays) <= 4
    finally:
        await close_all([ann, eve])
