"""Context from browsers: host election and failover, degraded text-only runs."""

from __future__ import annotations

import pytest

from steward.ports import PromptInput
from steward.store.database import Database
from steward_tools.headless.client import Faults
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.fixed_script import FixedScriptRunner
from tests.support.room import (
    close_all,
    join_clients,
    recording_steward,
    settle,
)

pytestmark = pytest.mark.integration


async def test_host_leaving_mid_run_gives_a_new_host_and_a_completed_run(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service, runners = await recording_steward(
        livekit_server, database, lambda: FixedScriptRunner(step_delay_s=0.1, context_every=5)
    )
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob", "carol"], runtime)
    try:
        alice, bob, carol = clients
        assert runtime.participants.host == "alice"  # first to join
        # No browser behind the prompt: the run sees the host's view, whoever that is.
        sid = await runtime.run_prompt(
            PromptInput(message="draw our signup flow", source="http", requester="http")
        )
        await wait_for(lambda: bob.applied_seq(sid) >= 1)
        await alice.disconnect()
        await wait_for(lambda: runtime.participants.host == "bob", timeout=5)
        assert await bob.wait_status(sid) == "done"
        await settle(runtime, [bob, carol], sid)
        contexts = runners[0].contexts
        assert contexts[0].source_identity == "alice" and not contexts[0].degraded
        assert all(c.view_note and "HTTP" in c.view_note for c in contexts)
        later = [c for c in contexts[1:] if c.source_identity != "alice"]
        assert later and all(not c.degraded and c.source_identity == "bob" for c in later)
        assert all(c.screenshot and c.screenshot[:2] == b"\xff\xd8" for c in contexts)
        assert {c.screenshot_type for c in contexts} == {"image/jpeg"}
        assert bob.shapes == carol.shapes == runtime.mirror.shapes
        assert len(bob.shapes) == 6
    finally:
        await close_all(clients[1:])
        await service.close()


async def test_screenshot_timeout_leads_to_a_degraded_text_only_run(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service, runners = await recording_steward(
        livekit_server, database, steward_context_timeout_s=0.3
    )
    runtime = await service.join(room_name)
    never = Faults(context_mode="no_screenshot")
    clients = await join_clients(
        livekit_server,
        room_name,
        ["alice", "bob"],
        runtime,
        faults={"alice": never, "bob": Faults(context_mode="error")},
    )
    try:
        alice, bob = clients
        reply = await alice.prompt("draw our signup flow")
        assert reply.session_id
        assert await alice.wait_status(reply.session_id) == "done"
        await settle(runtime, clients, reply.session_id)
        ctx = runners[0].contexts[0]
        assert ctx.degraded and ctx.screenshot is None
        # The host answered late: it is not asked again in this fetch (a late host must not
        # spend the fetch's budget); the fallback browser's refusals are retried (bounded),
        # then the run goes on degraded.
        assert alice.stats.context_requests == 1 and bob.stats.context_requests == 2, (
            alice.stats.context_requests,
            bob.stats.context_requests,
        )
        assert runtime.snapshots.degraded_runs == 1
        result = await runtime.sessions.wait(reply.session_id, timeout=5)
        assert result.summary["degraded_contexts"] == 1
        assert alice.shapes == bob.shapes == runtime.mirror.shapes
    finally:
        await close_all(clients)
        await service.close()


async def test_screenshots_of_a_refused_type_or_mislabelled_fall_back_to_the_next_browser(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service, runners = await recording_steward(
        livekit_server, database, steward_context_timeout_s=2.0
    )
    runtime = await service.join(room_name)
    clients = await join_clients(
        livekit_server,
        room_name,
        ["alice", "bob", "carol"],
        runtime,
        faults={
            "alice": Faults(context_mode="png_screenshot"),  # image/png: not accepted
            "bob": Faults(context_mode="mislabelled_screenshot"),  # JPEG bytes as image/webp
        },
    )
    try:
        alice, bob, carol = clients
        assert runtime.participants.host == "alice"
        reply = await alice.prompt("draw our signup flow")
        assert reply.session_id
        assert await alice.wait_status(reply.session_id) == "done"
        await settle(runtime, clients, reply.session_id)
        ctx = runners[0].contexts[0]
        assert not ctx.degraded and ctx.source_identity == "carol"
        assert ctx.screenshot_type == "image/jpeg" and (ctx.screenshot or b"")[:2] == b"\xff\xd8"
        assert ("agent:screenshot", "alice", "unsupported_image_type") in runtime.rejected
        assert ("agent:screenshot", "bob", "image_type_mismatch") in runtime.rejected
        # A refused image is not asked for again at the same browser (no retry could fix it).
        assert alice.stats.context_requests == 1 and bob.stats.context_requests == 1
        assert alice.shapes == bob.shapes == carol.shapes == runtime.mirror.shapes
    finally:
        await close_all(clients)
        await service.close()


async def test_gzip_shapes_arrive_intact_and_screenshots_respect_the_byte_budget(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    budget = 12_000  # under the synthetic 800x500 JPEG at quality 0.6: the host must step down
    service, runners = await recording_steward(
        livekit_server,
        database,
        steward_context_timeout_s=2.0,
        steward_screenshot_max_bytes=budget,
    )
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice", "bob"], runtime)
    try:
        alice, bob = clients
        bob.shapes_gzip = False  # an older client: plain JSON is still accepted
        reply = await alice.prompt("draw our signup flow")
        assert reply.session_id
        assert await alice.wait_status(reply.session_id) == "done"
        await settle(runtime, clients, reply.session_id)
        assert len(alice.shapes) == 6

        runtime.snapshots.cache.ttl_s = 0.0  # each fetch asks a browser
        by_id = lambda shapes: {s["id"]: s for s in shapes}  # noqa: E731
        ctx = await runtime.snapshots.fetch()
        assert not ctx.degraded and ctx.source_identity == "alice"
        assert by_id(ctx.shapes) == alice.shapes == runtime.mirror.shapes
        shot = ctx.screenshot or b""
        assert shot[:2] == b"\xff\xd8" and len(shot) <= budget
        fitted = alice.last_screenshot
        assert fitted is not None and fitted.data == shot
        assert fitted.tries > 1 and (fitted.quality < 0.6 or fitted.scale < 1.0)

        await alice.disconnect()
        await wait_for(lambda: runtime.participants.host == "bob", timeout=5)
        plain = await runtime.snapshots.fetch()
        assert not plain.degraded and plain.source_identity == "bob"
        assert by_id(plain.shapes) == bob.shapes == runtime.mirror.shapes
        assert len(plain.screenshot or b"") <= budget
        assert not [r for r in runtime.rejected if r[2] in ("corrupt_gzip", "oversize")]
        assert runners[0].contexts and not runners[0].contexts[0].degraded
    finally:
        await close_all(clients[1:])
        await service.close()
