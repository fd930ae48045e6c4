"""The room's conversation: one order every tab shows (numbered at first sight, a streamed
message keeping its place), bounded to the newest items, paged under the RPC cap; and the
words "undo" / "redo" resolved to the asker's last run."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from steward.protocol.limits import MAX_RPC_PAYLOAD_BYTES
from steward.protocol.messages import ConversationReply
from steward.protocol.names import TOPIC_THOUGHT
from steward.room.inbound.conversation_requests import ConversationRequests
from steward.room.inbound.undo_words import AskedRun, asked_runs, command_of, targets
from steward.room.outbound.conversation import Conversation
from steward.room.outbound.messenger import Messenger
from steward.room.participants import Participants


class Sent:
    def __init__(self) -> None:
        self.packets: list[tuple[dict[str, object], str]] = []

    async def __call__(
        self, payload: bytes, topic: str, destinations: list[str] | None = None
    ) -> None:
        self.packets.append((json.loads(payload), topic))


def order(conversation: Conversation) -> list[str]:
    return [i.key for i in conversation.items()]


async def test_items_are_numbered_at_first_sight_and_a_streamed_message_keeps_its_place() -> None:
    sent = Sent()
    messenger = Messenger("room", sent)
    await messenger.prompt("s1", "draw a barn", asker="ann", source="browser")
    await messenger.status("s1", "calling_model")
    await messenger.chat("s1", "Draw", partial=True, message_id="m1")  # numbered now
    await messenger.thought("s1", "think", "walls first")
    await messenger.chat("s2", "Other run.", message_id="m2")
    await messenger.chat("s1", "Drawing a barn.", message_id="m1")  # final, later
    await messenger.status("s1", "done")
    conv = messenger.conversation
    assert order(conv) == ["prompt:s1", "status:s1", "chat:m1", _thought(conv), "chat:m2"]
    assert [i.n for i in conv.items()] == [1, 2, 3, 4, 5]
    # Every live packet carries its number; the final keeps the partial's.
    live = [(p.get("id") or p.get("text") or p.get("status"), p["n"], t) for p, t in sent.packets]
    assert ("m1", 3, "agent:chat") in live and live.count(("m1", 3, "agent:chat")) == 2
    assert ("walls first", 4, TOPIC_THOUGHT) in live
    # A run's latest status replaces its first, in the first's place.
    status = next(i for i in conv.items() if i.key == "status:s1")
    assert status.n == 2 and status.payload["status"] == "done"
    # A resend to one participant is not news: the conversation keeps what everyone saw.
    await messenger.status("s1", "error", "again", to=["bob"])
    assert next(i for i in conv.items() if i.key == "status:s1").payload["status"] == "done"


def _thought(conv: Conversation) -> str:
    return next(i.key for i in conv.items() if i.kind == "thought")


async def test_the_conversation_keeps_the_newest_items_only() -> None:
    messenger = Messenger("room", Sent(), conversation=Conversation("room", None, keep=5))
    for k in range(12):
        await messenger.chat(f"s{k}", f"message {k}", message_id=f"m{k}")
    conv = messenger.conversation
    assert order(conv) == [f"chat:m{k}" for k in range(7, 12)]
    assert [i.n for i in conv.items()] == [8, 9, 10, 11, 12]
    # Numbering goes on from the highest, never reusing a dropped number.
    await messenger.chat("s", "next", message_id="m-next")
    assert conv.items()[-1].n == 13


async def test_a_page_fits_one_rpc_reply_and_says_where_to_go_on() -> None:
    messenger = Messenger("room", Sent())
    for k in range(40):
        await messenger.chat("s1", f"{k} " + "x" * 900, message_id=f"m{k}")
    seen: list[int] = []
    after = 0
    for _ in range(10):
        reply = messenger.conversation.page(after)
        assert len(reply.to_wire()) <= MAX_RPC_PAYLOAD_BYTES
        seen += [m.n or 0 for m in reply.chat]
        if reply.next is None:
            break
        after = reply.next
    assert seen == list(range(1, 41))
    assert (
        ConversationReply.model_validate_json(messenger.conversation.page(40).to_wire()).chat == []
    )


def test_undo_and_redo_are_words_not_prompts() -> None:
    for said in ("undo", "Undo!", "undo that", "please undo that.", "UNDO IT"):
        assert command_of(said) == "undo", said
    for said in ("redo", "Redo that", "redo it please"):
        assert command_of(said) == "redo", said
    for said in ("undo the barn and draw a house", "draw an undo button", "", "redo the roof"):
        assert command_of(said) is None, said


def test_undo_takes_back_the_askers_last_run_still_in_effect_and_redo_its_last_undo() -> None:
    p1 = AskedRun("p1", "ann", "draw a barn")
    p2 = AskedRun("p2", "bob", "add a fence")
    p3 = AskedRun("p3", "ann", "add a door")
    runs = [p1, p2, p3]
    assert [r.session_id for r in targets(runs, "ann", "undo")] == ["p3", "p1"]
    assert targets(runs, "ann", "redo") == []
    # ann undoes p3: her next undo is p1, and redo takes back that undo.
    u1 = AskedRun("u1", "ann", "undo", reverts="p3")
    runs.append(u1)
    assert [r.session_id for r in targets(runs, "ann", "undo")] == ["p1"]
    assert [r.session_id for r in targets(runs, "ann", "redo")] == ["u1"]
    # The redo (a revert of the undo) puts p3 back in effect: undo takes it again; a redo is
    # never itself redone.
    r1 = AskedRun("r1", "ann", "redo", reverts="u1")
    runs.append(r1)
    assert [r.session_id for r in targets(runs, "ann", "undo")] == ["p3", "p1"]
    assert targets(runs, "ann", "redo") == []
    # bob's words reach only bob's runs.
    assert [r.session_id for r in targets(runs, "bob", "undo")] == ["p2"]
    assert targets(runs, "cat", "undo") == []


async def test_a_prompt_fairies_runs_followed_is_marked_helped() -> None:
    """An "undo" passes over a run that changed nothing only when no fairy worked after it."""
    messenger = Messenger("room", Sent())
    await messenger.prompt("p1", "what time is it?", asker="ann", source="browser")
    await messenger.chat("p1", "It is noon.", message_id="a")
    await messenger.prompt("p2", "project: a farm", asker="ann", source="browser")
    await messenger.chat("p2", "Planning.", message_id="b")
    await messenger.status("d1", "streaming", fairy="f1")  # a drone's own run
    await messenger.chat("d1", "Barn drawn.", fairy="f1", message_id="c")
    await messenger.prompt("p3", "a title", asker="bob", source="browser")
    runs = asked_runs(messenger.conversation.items())
    assert [(r.session_id, r.helped) for r in runs] == [("p1", False), ("p2", True), ("p3", False)]


async def test_a_page_goes_to_participants_only_within_their_rate_and_bad_input_is_refused() -> (
    None
):
    messenger = Messenger("room", Sent())
    await messenger.chat("s1", "hello", message_id="m1")
    people = Participants()
    people.joined("ann", 1, {})
    requests = ConversationRequests(messenger.conversation, people, pages_per_min=2)

    async def ask(caller: str, payload: str) -> ConversationReply:
        inv: Any = SimpleNamespace(caller_identity=caller, payload=payload)
        return ConversationReply.model_validate_json(await requests.on_conversation_rpc(inv))

    page = await ask("ann", '{"after": 0}')
    assert page.error is None and [m.text for m in page.chat] == ["hello"]
    assert (await ask("mallory", '{"after": 0}')).error == "not a participant of this room"
    bad = await ask("ann", '{"after": -1}')
    assert bad.error is not None and bad.error.startswith("invalid request")
    assert (await ask("ann", "{}")).error is None  # the second page this minute
    assert (await ask("ann", "{}")).error == (
        "rate limit: too many conversation pages, try again in a minute"
    )
