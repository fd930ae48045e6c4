"""Data packets from the room's participants, before any handler sees them.

Every packet counts against its sender's budget, on any topic (the app's own included),
before anything else; a muted sender's packets (LiveKit forwards what it had in flight while
it is told) are dropped unread. Packets on our topics are rate-limited per sender, decoded
and bounded by their topic's model, then handed to the topic's handler. Whatever is refused,
here or by a handler, is counted, struck against its sender, kept among the last `rejected`
and logged: bad input never stops the room.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from livekit import rtc

from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.obs.sampled_log import SampledLog
from steward.protocol import ProtocolError, decode
from steward.protocol.messages import WireModel
from steward.protocol.names import TOPIC_ACK
from steward.room.inbound.abuse import AbuseGuard, refusal_weight
from steward.room.inbound.budget import InboundBudget
from steward.room.inbound.intake import RateLimiter

log = get_logger(__name__)

# Topics this runtime answers; packets on other topics belong to the app and are ignored.
_OWN_PREFIXES = ("agent:", "steward:", "canvas:")
# Inbound messages per participant per minute (acks are exempt: one per envelope).
INBOUND_PER_MIN = 600
# Acks: one per envelope sent, so generous; each is also checked against what was sent.
ACKS_PER_MIN = 6000
# How many refusals `rejected` keeps (the newest).
REJECTED_KEPT = 100

Handler = Callable[[str, Any], Awaitable[None] | None]


class Reject(Protocol):
    """Refuse something a participant sent: counted, struck, kept and logged."""

    def __call__(
        self, topic: str, sender: str, reason: str, detail: str = "", *, size: int | None = None
    ) -> None: ...


class InboundPackets:
    """Charges every data packet to its sender's budget and drops a muted sender's before any
    handler runs."""

    def __init__(
        self,
        room_id: str,
        abuse: AbuseGuard,
        *,
        bytes_per_window: int,
        packets_per_window: int,
        burst_bytes: int | None = None,
        unread_burst_bytes: int | None = None,
        spawn: Callable[[Awaitable[None]], object],
        on_activity: Callable[[], None],
    ) -> None:
        self.room_id = room_id
        self._abuse = abuse
        self._spawn = spawn
        self._on_activity = on_activity
        # Everything each participant sends, on any topic, read or not (inbound_budget).
        self.budget = InboundBudget(
            self._over_budget,
            bytes_per_window=bytes_per_window,
            packets_per_window=packets_per_window,
            burst_bytes=burst_bytes,
            unread_burst_bytes=unread_burst_bytes,
        )
        self.rejected: list[tuple[str, str, str]] = []
        # Packets of muted senders dropped unread (LiveKit forwards what it had in flight).
        self.dropped_from_muted = 0
        self._inbound_limit = RateLimiter(INBOUND_PER_MIN)
        self._ack_limit = RateLimiter(ACKS_PER_MIN)
        self._handlers: dict[str, tuple[type[WireModel], int, Handler]] = {}
        self._sampled = SampledLog(log)

    def handle(self, topic: str, model: type[WireModel], max_bytes: int, handler: Handler) -> None:
        """Packets on `topic` are decoded as `model` (at most `max_bytes`) for `handler`; a
        coroutine it returns runs in the background, a ValueError it raises is a refusal."""
        self._handlers[topic] = (model, max_bytes, handler)

    def reject(
        self, topic: str, sender: str, reason: str, detail: str = "", *, size: int | None = None
    ) -> None:
        metrics.REJECTED_INBOUND.labels(topic=topic, reason=reason).inc()
        self._abuse.strike(sender, reason, weight=refusal_weight(reason, size))
        self.rejected.append((topic, sender, reason))
        del self.rejected[:-REJECTED_KEPT]
        log.warning(
            "inbound_rejected",
            room=self.room_id,
            topic=topic,
            participant=sender,
            reason=reason,
            detail=detail[:300],
        )

    def _over_budget(self, identity: str, reason: str, weight: int) -> None:
        metrics.REJECTED_INBOUND.labels(topic="*", reason=reason).inc()
        used, packets = self.budget.usage(identity)
        self._sampled.warning(
            (identity, reason),
            "inbound_over_budget",
            room=self.room_id,
            participant=identity,
            reason=reason,
            window_bytes=used,
            window_packets=packets,
        )
        self._abuse.strike(identity, reason, weight=weight)  # after its reason's line

    def on_data(self, packet: rtc.DataPacket) -> None:
        topic = packet.topic or ""
        sender = packet.participant.identity if packet.participant is not None else None
        own = topic.startswith(_OWN_PREFIXES)
        if sender is not None:
            if sender in self._abuse.muted:
                self.dropped_from_muted += 1
                return
            unread = not own or topic not in self._handlers
            charged = self.budget.charge(sender, len(packet.data), unread=unread)
            if not charged and sender in self._abuse.muted:
                self.dropped_from_muted += 1  # this one's strike muted it: unread as well
                return
        if not own:
            return
        if sender is None:
            self.reject(topic, "<server>", "no_sender")
            return
        self._on_activity()
        entry = self._handlers.get(topic)
        if entry is None:
            return  # a topic we send, echoed by nobody; or another app's agent:* message
        model, max_bytes, handler = entry
        limit = self._ack_limit if topic == TOPIC_ACK else self._inbound_limit
        if not limit.allow(sender):
            self.reject(topic, sender, "rate_limited")
            return
        msg = decode(model, packet.data, topic=topic, max_bytes=max_bytes)
        if isinstance(msg, ProtocolError):
            self.reject(topic, sender, msg.kind, msg.reason)
            return
        try:
            result = handler(sender, msg)
        except ValueError as err:
            self.reject(topic, sender, "invalid", str(err))
            return
        except Exception as err:
            self.reject(topic, sender, "handler_error", repr(err))
            return
        if result is not None:
            self._spawn(result)
