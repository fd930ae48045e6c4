"""LiveKit's chat, `lk.chat` text streams (one stream a message, as LiveKit's components'
`useChat` and the agents playground send and show them).

In: each stream is a typed prompt of its sender, the participant identity LiveKit names for
it (never anything in the text). It takes the `steward.prompt` RPC's one path
(`Intake.submit`): the same grant, rate limit, strikes and refusals. A refusal is answered
to the sender alone, on `lk.chat`. A stream is metered against its
sender's inbound budget as it is read, bounded in size (`MAX_PROMPT_CHARS`) and in time
(`READ_TIMEOUT_S`); a muted sender's is closed unread.

Out: the agent's whole chat messages (what browsers get on `agent:chat`, without the
partials) go to the room as plain text, one stream each, so LiveKit's chat shows them as
the steward's. At most `MAX_SENDING` are in flight; past that one is dropped, with a log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from livekit import rtc
from pydantic import ValidationError

from steward.obs.logging import get_logger
from steward.obs.sampled_log import SampledLog
from steward.protocol.limits import MAX_PROMPT_CHARS
from steward.protocol.messages import PromptRequest
from steward.protocol.names import TOPIC_LK_CHAT
from steward.room.inbound.intake import Intake
from steward.room.inbound.stream_inbox import StreamMeter
from steward.task_set import TaskSet

log = get_logger(__name__)

READ_TIMEOUT_S = 15.0
SEND_TIMEOUT_S = 10.0
MAX_SENDING = 32
# Characters of one outbound message (LiveKit's chat shows a message whole).
MAX_OUT_CHARS = 16_000


# `LocalParticipant.send_text`, behind the room's lease gate.
SendText = Callable[..., Awaitable[object]]


Reject = Callable[[str, str, str, str], None]


class LkChat:
    """LiveKit's chat: reads `lk.chat` streams as typed prompts and sends the steward's replies
    there."""

    def __init__(
        self,
        room_id: str,
        intake: Intake,
        send: SendText,
        meter: StreamMeter,
        on_reject: Reject,
    ) -> None:
        self.room_id = room_id
        self._intake = intake
        self._send = send
        self._meter = meter
        self._on_reject = on_reject
        self._reading = TaskSet("lk_chat_read_failed", room=room_id)
        self._sending = TaskSet("lk_chat_send_failed", room=room_id)
        self._sampled = SampledLog(log)
        # Session ids of prompts that came this way, and messages sent out, for tests.
        self.started: list[str] = []
        self.sent = 0

    # --- in --------------------------------------------------------------------------------
    def on_stream(self, reader: rtc.TextStreamReader, sender: str) -> None:
        if self._meter.muted(sender):
            reader.close()  # an abandoned reader stays subscribed to every SDK event
            return
        self._reading.spawn(self._prompt(reader, sender))

    async def _prompt(self, reader: rtc.TextStreamReader, sender: str) -> None:
        text = await self._read(reader, sender)
        if text is None:
            return
        try:
            req = PromptRequest(message=text.strip())
        except ValidationError:  # empty: nothing to run (the text itself is not logged)
            self._on_reject(TOPIC_LK_CHAT, sender, "invalid", "empty message")
            await self._answer(sender, "invalid prompt: the message is empty")
            return
        reply = await self._intake.submit(sender, req, "chat")
        if reply.session_id is not None:
            self.started.append(reply.session_id)
            del self.started[:-64]
        if reply.error:
            await self._answer(sender, f"Not run: {reply.error}")

    async def _read(self, reader: rtc.TextStreamReader, sender: str) -> str | None:
        """The whole message, or None (refused, logged, the reader closed)."""
        text = ""
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                async for chunk in reader:
                    if not self._meter.charge(sender, len(chunk.encode())):
                        reader.close()  # over its budget: the budget's strikes say so
                        return None
                    text += chunk
                    if len(text) > MAX_PROMPT_CHARS:
                        reader.close()
                        self._on_reject(
                            TOPIC_LK_CHAT, sender, "oversize", f"over {MAX_PROMPT_CHARS} chars"
                        )
                        await self._answer(
                            sender, f"Not run: a prompt is at most {MAX_PROMPT_CHARS} characters"
                        )
                        return None
        except TimeoutError:
            reader.close()
            self._on_reject(TOPIC_LK_CHAT, sender, "stream_timeout", f"{READ_TIMEOUT_S} s")
            return None
        except Exception as err:  # aborted by the sender, or the room went away
            reader.close()
            self._on_reject(TOPIC_LK_CHAT, sender, "stream_failed", repr(err))
            return None
        return text

    async def _answer(self, sender: str, text: str) -> None:
        await self._deliver(text, to=[sender])

    # --- out -------------------------------------------------------------------------------
    def chat(self, text: str, role: str, fairy: str | None) -> None:
        """One whole chat message of a run (`Messenger.on_chat`): the agent's go out."""
        if role != "assistant" or not text.strip():
            return
        if len(self._sending) >= MAX_SENDING:
            self._sampled.warning(("lk_chat_dropped",), "lk_chat_dropped", room=self.room_id)
            return
        body = text[:MAX_OUT_CHARS]
        self._sending.spawn(self._deliver(f"{fairy}: {body}" if fairy else body))

    async def _deliver(self, text: str, *, to: list[str] | None = None) -> None:
        try:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await self._send(text, topic=TOPIC_LK_CHAT, destination_identities=to or [])
            self.sent += 1
        except Exception as err:  # UI only: the run and the room go on without it
            self._sampled.warning(
                ("lk_chat_send_failed",), "lk_chat_send_failed", room=self.room_id, error=repr(err)
            )

    @property
    def sending(self) -> int:
        """Outbound messages in flight."""
        return len(self._sending)

    async def settled(self) -> None:
        """Wait until the streams and messages handed over so far are read and sent."""
        await self._reading.wait()
        await self._sending.wait()

    async def close(self) -> None:
        await self._reading.close()
        await self._sending.close()
