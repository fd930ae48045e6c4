"""`lk.chat`: prompts in through the RPC's one path, the agent's chat out
(room/inbound/lk_chat), and the hooks that feed it and `lk.agent.state` (messenger, intake)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from steward.access import Grant
from steward.ports import PromptInput
from steward.protocol.limits import MAX_PROMPT_CHARS
from steward.room.inbound import lk_chat
from steward.room.inbound.intake import Intake
from steward.room.inbound.lk_chat import LkChat
from steward.room.inbound.stream_inbox import StreamMeter
from steward.room.outbound.messenger import Messenger
from steward.room.participants import Participants


@dataclass
class Info:
    stream_id: str = "st-1"
    size: int | None = None
    attributes: dict[str, str] = field(default_factory=dict)


class Reader:
    """A text stream as the SDK hands it over: chunks, then its end."""

    def __init__(self, *chunks: str) -> None:
        self.info = Info()
        self._chunks = list(chunks)
        self.closed = False
        self.read = 0

    def __aiter__(self) -> AsyncIterator[str]:
        return self._gen()

    async def _gen(self) -> AsyncIterator[str]:
        for chunk in self._chunks:
            if self.closed:
                return
            self.read += 1
            yield chunk
        self.closed = True

    def close(self) -> None:
        self.closed = True


class Rig:
    def __init__(
        self, *, granted: set[str], muted: frozenset[str] = frozenset(), budget: int = 10**6
    ) -> None:
        self.started: list[PromptInput] = []
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.strikes: list[tuple[str, str, int]] = []
        self.rejected: list[tuple[str, str, str]] = []
        self.charged: dict[str, int] = {}
        self.participants = Participants()
        for who in ("alice", "eve"):
            self.participants.joined(who, 1, {})

        async def start(prompt: PromptInput) -> str:
            self.started.append(prompt)
            return f"s-{len(self.started)}"

        def grant(member: Any) -> Grant | None:
            return Grant("p", 2**40, "n") if member.identity in granted else None

        self.intake = Intake(
            "r1",
            self.participants,
            start,
            lambda _sid, _who: False,
            verify_grant=grant,
            on_strike=lambda who, why, weight: self.strikes.append((who, why, weight)),
        )

        def charge(who: str, nbytes: int) -> bool:
            self.charged[who] = self.charged.get(who, 0) + nbytes
            return self.charged[who] <= budget

        # Set: every send waits for it (a peer that does not take our messages).
        self.gate: asyncio.Event | None = None

        async def send(text: str, **options: Any) -> None:
            if self.gate is not None:
                await self.gate.wait()
            self.sent.append((text, options))

        self.chat = LkChat(
            "r1",
            self.intake,
            send,
            StreamMeter(lambda who: who in muted, charge),
            lambda topic, who, reason, _detail: self.rejected.append((topic, who, reason)),
        )

    async def stream(self, reader: Reader, sender: str) -> None:
        self.chat.on_stream(reader, sender)  # type: ignore[arg-type]
        await self.chat.settled()


async def test_a_granted_senders_message_is_their_prompt() -> None:
    rig = Rig(granted={"alice"})
    await rig.stream(Reader("draw a ", "flow chart"), "alice")
    (prompt,) = rig.started
    assert (prompt.message, prompt.requester, prompt.source) == (
        "draw a flow chart",
        "alice",
        "browser",
    )
    assert rig.chat.started == ["s-1"]
    assert rig.sent == [] and rig.strikes == [] and rig.rejected == []


async def test_without_the_grant_it_is_refused_as_the_rpc_refuses_answered_to_the_sender() -> None:
    rig = Rig(granted={"alice"})
    await rig.stream(Reader("draw a cat"), "eve")
    assert rig.started == []
    assert rig.strikes == [("eve", "prompt_refused", 1)]
    assert rig.sent == [
        (
            "Not run: not allowed to prompt in this room",
            {"topic": "lk.chat", "destination_identities": ["eve"]},
        )
    ]
    # The same refusal as `steward.prompt`: its eleventh in a minute weighs ten strikes.
    for _ in range(10):
        await rig.stream(Reader("draw a cat"), "eve")
    assert rig.strikes[-1] == ("eve", "prompt_refused", 10)
    assert "rate limit" in rig.sent[-1][0]


async def test_bad_input_is_refused_unrun_and_the_stream_closed() -> None:
    rig = Rig(granted={"alice"})
    long = Reader("x" * 5000, "x" * 5000, "never read")
    await rig.stream(long, "alice")
    assert long.closed and long.read == 2
    await rig.stream(Reader("  ", "\n"), "alice")
    assert rig.started == []
    assert [r[2] for r in rig.rejected] == ["oversize", "invalid"]
    assert str(MAX_PROMPT_CHARS) in rig.sent[0][0]
    assert rig.sent[1][0] == "invalid prompt: the message is empty"


async def test_muted_and_over_budget_senders_are_not_read() -> None:
    rig = Rig(granted={"alice", "eve"}, muted=frozenset({"eve"}), budget=8)
    muted = Reader("draw a cat")
    await rig.stream(muted, "eve")
    assert muted.closed and muted.read == 0
    over = Reader("draw a ", "very big cat")
    await rig.stream(over, "alice")
    assert over.closed and rig.charged["alice"] > 8
    assert rig.started == [] and rig.sent == []


async def test_the_agents_whole_chat_goes_out_bounded() -> None:
    rig = Rig(granted=set())
    rig.chat.chat("I drew a cat.", "assistant", None)
    rig.chat.chat("draw a cat", "user", None)  # the asker's own words: not the agent's
    rig.chat.chat("  ", "assistant", None)
    rig.chat.chat("Planted a tree.", "assistant", "gardener")
    await rig.chat.settled()
    assert rig.sent == [
        ("I drew a cat.", {"topic": "lk.chat", "destination_identities": []}),
        ("gardener: Planted a tree.", {"topic": "lk.chat", "destination_identities": []}),
    ]
    gate = rig.gate = asyncio.Event()
    for i in range(lk_chat.MAX_SENDING + 5):
        rig.chat.chat(f"m{i}", "assistant", None)
    assert rig.chat.sending == lk_chat.MAX_SENDING  # the rest dropped, with a log line
    gate.set()
    await rig.chat.settled()
    assert rig.chat.sent == 2 + lk_chat.MAX_SENDING
    await rig.chat.close()


async def test_messenger_tells_statuses_and_whole_chats_not_partials_nor_resends() -> None:
    async def publish(_payload: bytes, _topic: str, _to: list[str] | None = None) -> None:
        return None

    m = Messenger("r1", publish)
    statuses: list[tuple[str, str]] = []
    chats: list[tuple[str, str, str | None]] = []
    m.on_status = lambda sid, status: statuses.append((sid, status))
    m.on_chat = lambda text, role, fairy: chats.append((text, role, fairy))
    await m.chat("s1", "drawing…", partial=True)
    await m.chat("s1", "done drawing", fairy="f1")
    await m.status("s1", "calling_model")
    await m.status("s0", "error", "interrupted", to=["alice"])  # a resend to one browser
    assert chats == [("done drawing", "assistant", "f1")]
    assert statuses == [("s1", "calling_model")]


async def test_intake_hears_only_addressing_speakers_who_may_prompt() -> None:
    rig = Rig(granted={"alice"})
    heard: list[str] = []
    rig.intake.on_addressed = heard.append
    rig.intake.heard("alice", "so what about lunch")
    rig.intake.heard("eve", "steward, draw a cat")  # may not prompt
    rig.intake.heard("alice", "steward, draw")
    assert heard == ["alice"]
    await rig.intake.voice_final("alice", "Steward.")  # armed: the next words are for it
    rig.intake.heard("alice", "a big red")
    assert heard == ["alice", "alice", "alice"]
