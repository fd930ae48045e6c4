"""The room's conversation and the words that are commands, in a real room: real
livekit-server and Postgres, headless clients applying and acking like browsers.

- "undo" / "redo" typed (RPC `steward.prompt`, LiveKit's `lk.chat`) take back and do again
  the asker's last run, as the undo button does, and never start a model run.
- The conversation comes back, in its order and bounded, to a client that asks
  (`steward.conversation`), also from a steward started after the one that wrote it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from steward.protocol.messages import ConversationReply, ConversationRequest
from steward.protocol.names import RPC_CONVERSATION, TOPIC_LK_CHAT
from steward.service import StewardService
from steward.store.database import Database
from steward_tools.headless.client import HeadlessClient
from steward_tools.livekit_server import LiveKitServer
from tests.conftest import wait_for
from tests.support.fixed_script import FixedScriptRunner
from tests.support.room import (
    close_all,
    converged,
    drawn_run,
    join_clients,
    recording_steward,
    rectangle,
    settle,
)

pytestmark = pytest.mark.integration


@pytest.fixture
async def steward(
    livekit_server: LiveKitServer, database: Database
) -> AsyncIterator[tuple[StewardService, list[FixedScriptRunner]]]:
    service, runners = await recording_steward(
        livekit_server, database, steward_conversation_items=12
    )
    yield service, runners
    await service.close()


async def conversation(client: HeadlessClient) -> ConversationReply:
    """Every page of the room's conversation, as a loading tab reads it."""
    whole = ConversationReply()
    after = 0
    for _ in range(50):
        raw = await client.room.local_participant.perform_rpc(
            destination_identity=client.steward_identity,
            method=RPC_CONVERSATION,
            payload=ConversationRequest(after=after).to_wire().decode(),
        )
        page = ConversationReply.model_validate_json(raw)
        assert page.error is None, page.error
        whole.prompts += page.prompts
        whole.chat += page.chat
        whole.thoughts += page.thoughts
        whole.statuses += page.statuses
        if page.next is None:
            return whole
        after = page.next
    raise AssertionError("the conversation never ended")


def in_order(reply: ConversationReply) -> list[tuple[int, str]]:
    items = [
        *((p.n or 0, f"prompt {p.asker}: {p.text}") for p in reply.prompts),
        *((m.n or 0, f"chat: {m.text}") for m in reply.chat),
        *((t.n or 0, f"thought: {t.text}") for t in reply.thoughts),
        *((s.n or 0, f"status {s.session_id}: {s.status}") for s in reply.statuses),
    ]
    return sorted(items)


async def test_undo_and_redo_typed_or_on_lk_chat_never_reach_the_model(
    steward: tuple[StewardService, list[FixedScriptRunner]],
    livekit_server: LiveKitServer,
    room_name: str,
) -> None:
    service, runners = steward
    runtime = await service.join(room_name)
    clients = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
    ann, bob = clients
    try:
        await ann.edit([rectangle("mine", -400, -400, w=120, h=60, text="a user's note")])
        await wait_for(lambda: all("mine" in c.shapes for c in clients))
        before = await converged(runtime, clients)
        run = await drawn_run(ann, runtime, clients)
        after_run = await converged(runtime, clients)
        assert len(after_run) > len(before) and len(runners) == 1

        # Bob has no run to take back; Ann's "undo that" takes back hers.
        refused = await bob.prompt("undo")
        assert refused.session_id is None and refused.error == "nothing of yours to undo"
        undo = await ann.prompt("Undo that!")
        assert undo.error is None and undo.session_id and undo.session_id != run
        assert runtime.sessions.kinds[undo.session_id] == "revert"
        assert await bob.wait_status(undo.session_id) == "done"
        await settle(runtime, clients, undo.session_id)
        assert await converged(runtime, clients) == before
        said = [m.text for m in bob.chat if m.session_id == undo.session_id]
        assert said == ['Took back "draw our signup flow": 6 shape changes.']

        # "redo" on LiveKit's chat does it again, through the same sequenced stream.
        await ann.room.local_participant.send_text("redo", topic=TOPIC_LK_CHAT)
        await wait_for(lambda: len(runtime.sessions.kinds) == 3, timeout=15)
        redo = next(s for s in runtime.sessions.kinds if s not in (run, undo.session_id))
        assert runtime.sessions.kinds[redo] == "revert"
        assert await bob.wait_status(redo) == "done"
        await settle(runtime, clients, redo)
        assert await converged(runtime, clients) == after_run
        assert any(
            m.text.startswith('Took back the undo of "draw our signup flow"') for m in bob.chat
        )
        # No model run for any of the words; nothing left to redo.
        assert len(runners) == 1
        assert (await ann.prompt("redo")).error == "no undo of yours to redo"
        assert len(runners) == 1
    finally:
        await close_all(clients)


async def test_the_conversation_comes_back_in_order_bounded_and_after_a_restart(
    livekit_server: LiveKitServer, database: Database, room_name: str
) -> None:
    service, _ = await recording_steward(livekit_server, database, steward_conversation_items=12)
    clients: list[HeadlessClient] = []
    try:
        runtime = await service.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["ann", "bob"], runtime)
        ann, bob = clients
        for _ in range(5):  # a prompt, a message and a status each: 15 items
            await drawn_run(ann, runtime, clients)
        live = in_order(await conversation(bob))
        kept = runtime.conversation.items()
        assert len(live) == len(kept) == 12  # bounded: the newest 12 of more
        assert [n for n, _ in live] == [i.n for i in kept]
        assert kept[-1].n > 12  # older items were dropped, numbering went on
        # Live packets carried the same numbers the conversation serves.
        assert {m.n for m in bob.chat if not m.partial} <= {n for n, _ in live} | {
            n for n in range(1, kept[0].n)
        }
        stored = await database.pool.fetchval(
            "SELECT count(*) FROM conversation_items WHERE room_id = $1", room_name
        )
        assert stored == 12
        await close_all(clients)
        await service.close()

        # A steward started afterwards serves the same conversation and numbers on.
        service, _ = await recording_steward(
            livekit_server, database, steward_conversation_items=12
        )
        runtime = await service.join(room_name)
        clients = await join_clients(livekit_server, room_name, ["cat"], runtime)
        assert in_order(await conversation(clients[0])) == live
        reply = await clients[0].prompt("draw our signup flow")
        assert reply.session_id and await clients[0].wait_status(reply.session_id) == "done"
        after = in_order(await conversation(clients[0]))
        assert len(after) == 12 and after[0][0] > live[0][0]
        assert min(n for n, text in after if "prompt cat" in text) > live[-1][0]
    finally:
        await close_all(clients)
        await service.close()
