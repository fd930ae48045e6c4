"""What makes the steward look like a LiveKit agent to LiveKit's own frontends: its
`lk.agent.state` attribute (`agent_state`) and LiveKit's chat on `lk.chat` (`lk_chat`),
wired to the room's intake, messenger and inbound meter, behind the room's lease gate."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from livekit import rtc

from steward.protocol.names import ATTR_AGENT_STATE, TOPIC_LK_CHAT
from steward.room.inbound.intake import Intake
from steward.room.inbound.lk_chat import LkChat, Reject
from steward.room.inbound.stream_inbox import StreamMeter
from steward.room.outbound.agent_state import AgentState
from steward.room.outbound.messenger import Messenger
from steward.task_set import close_within

MaySpeak = Callable[[str], Awaitable[bool]]


class LiveKitConventions:
    """Wires the steward's `lk.agent.state` attribute and `lk.chat` to the room, as LiveKit's
    frontends expect."""

    def __init__(
        self,
        room: rtc.Room,
        room_id: str,
        *,
        intake: Intake,
        messenger: Messenger,
        meter: StreamMeter,
        on_reject: Reject,
        may_speak: MaySpeak,
    ) -> None:
        self.room = room
        self.room_id = room_id
        self._may_speak = may_speak
        self.state = AgentState(room_id, self._set_attributes)
        self.chat = LkChat(room_id, intake, self._send_text, meter, on_reject)
        messenger.on_status = self.state.session_status
        messenger.on_chat = self.chat.chat
        intake.on_addressed = self._addressed

    def start(self) -> None:
        self.room.register_text_stream_handler(TOPIC_LK_CHAT, self.chat.on_stream)
        self.state.start()

    async def close(self) -> None:
        await close_within(self.chat.close(), "lk_chat", room=self.room_id)
        await close_within(self.state.close(), "agent_state", room=self.room_id)

    def _addressed(self, _speaker: str) -> None:
        self.state.heard()

    async def _set_attributes(self, attributes: dict[str, str]) -> None:
        if await self._may_speak(ATTR_AGENT_STATE):
            await self.room.local_participant.set_attributes(attributes)

    async def _send_text(self, text: str, **options: Any) -> None:
        if await self._may_speak(TOPIC_LK_CHAT):
            await self.room.local_participant.send_text(text, **options)
