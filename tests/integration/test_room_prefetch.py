"""Composing hints over a real livekit-server: the context a prompt needs is fetched while the
user types, and the prompt's session uses it without asking the host again."""

from __future__ import annotations

import pytest

from steward.protocol.names import TOPIC_COMPOSING
from steward.store.database import Database
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.room import (
    close_all,
    join_clients,
    recording_steward,
    settle,
)

pytestmark = pytest.mark.integration


async def test_a_hinted_prompt_uses_the_prefetched_context_and_bad_hints_are_refused(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service, runners = await recording_steward(
        livekit_server, database, steward_context_timeout_s=2.0
    )
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["alice"], runtime)
    clients += await join_clients(livekit_server, room_name, ["bob"], runtime, can_prompt=False)
    alice, bob = clients
    try:
        assert runtime.participants.host == "alice"
        # A participant without the prompt grant, and a payload that is not a hint.
        await bob.composing()
        await alice.send_raw(b'{"ts": "soon"}', TOPIC_COMPOSING)
        await wait_for(lambda: len(runtime.rejected) >= 2)
        assert (TOPIC_COMPOSING, "bob", "not_allowed") in runtime.rejected
        assert (TOPIC_COMPOSING, "alice", "schema") in runtime.rejected
        assert alice.stats.context_requests == 0

        await alice.composing()
        await wait_for(lambda: runtime.snapshots.cache.prefetch_stats["ok"] == 1, timeout=10)
        assert alice.stats.context_requests == 1
        reply = await alice.prompt("draw our signup flow")
        assert reply.session_id
        assert await alice.wait_status(reply.session_id) == "done"
        await settle(runtime, clients, reply.session_id)
        ctx = runners[0].contexts[0]
        assert ctx.source == "prefetched" and not ctx.degraded
        assert ctx.screenshot and ctx.screenshot[:2] == b"\xff\xd8"
        assert ctx.screenshot_type == "image/jpeg"  # what headless clients send
        assert alice.stats.context_requests == 1  # no second RPC for the prompt
        result = await runtime.sessions.wait(reply.session_id, timeout=5)
        assert result.summary["context_sources"][0] == "prefetched"
        assert runtime.composing.counts.get("started") == 1
    finally:
        await close_all(clients)
        await service.close()
