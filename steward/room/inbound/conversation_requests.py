"""RPC `steward.conversation`: a page of the room's conversation (`steward.room.outbound.
conversation`) for a tab that loads, reloads or joins late. Any participant of the room may
read it (it was shown to everyone live), a few pages a second at most."""

from __future__ import annotations

from livekit import rtc

from steward.obs.logging import get_logger
from steward.protocol import ProtocolError, decode
from steward.protocol.limits import MAX_RPC_PAYLOAD_BYTES
from steward.protocol.messages import ConversationReply, ConversationRequest
from steward.protocol.names import RPC_CONVERSATION
from steward.room.inbound.intake import RateLimiter
from steward.room.outbound.conversation import Conversation
from steward.room.participants import Participants

log = get_logger(__name__)

# Pages a participant may ask for a minute (a reload asks for a few).
PAGES_PER_MIN = 60


class ConversationRequests:
    """Answers RPC `steward.conversation` with a page of the room's conversation, rate-limited per
    participant."""

    def __init__(
        self,
        conversation: Conversation,
        participants: Participants,
        *,
        pages_per_min: int = PAGES_PER_MIN,
    ) -> None:
        self.room_id = conversation.room_id
        self._conversation = conversation
        self._participants = participants
        self._limit = RateLimiter(pages_per_min)

    async def on_conversation_rpc(self, inv: rtc.RpcInvocationData) -> str:
        caller = inv.caller_identity
        req = decode(
            ConversationRequest,
            inv.payload,
            topic=RPC_CONVERSATION,
            max_bytes=MAX_RPC_PAYLOAD_BYTES,
        )
        if isinstance(req, ProtocolError):
            log.warning(
                "inbound_rejected",
                room=self.room_id,
                topic=RPC_CONVERSATION,
                participant=caller,
                reason=req.kind,
                detail=str(req)[:300],
            )
            return ConversationReply(error=f"invalid request: {req}").to_wire().decode()
        # The conversation is the room's: any participant of it reads what it was shown live.
        known = self._participants.get(caller) is not None
        error = None if known else "not a participant of this room"
        if error is None and not self._limit.allow(caller):
            error = "rate limit: too many conversation pages, try again in a minute"
        if error is not None:
            log.info("conversation_refused", room=self.room_id, participant=caller, reason=error)
            return ConversationReply(error=error).to_wire().decode()
        return self._conversation.page(req.after).to_wire().decode()
