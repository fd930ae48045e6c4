"""Who is in the room, what each browser can do, and which browser is the host.

Browsers announce capabilities in the attribute `steward.capabilities` (comma list of
context, screenshot, apply). The host is the capable browser that joined first (ties: lowest
identity), so every steward computes the same host. Leaves are debounced: a short delay for
ordinary leaves (a new host stays well within 500 ms), and no removals at all while the
steward's own connection is reconnecting, because the SDK then reports every participant as
gone and re-adds them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from steward.obs.logging import get_logger
from steward.protocol.names import ATTR_CAN_PROMPT, ATTR_CAPABILITIES, ATTR_ROLE

log = get_logger(__name__)

KNOWN_CAPABILITIES = frozenset({"context", "screenshot", "apply"})
# Ordinary leaves wait this long before counting (a quick rejoin cancels the leave).
LEAVE_DEBOUNCE_S = 0.15
# After our own reconnect, participants not re-added within this grace are gone.
RECONNECT_GRACE_S = 1.0


def parse_capabilities(raw: str | None) -> frozenset[str]:
    if not raw:
        return frozenset()
    return frozenset(c.strip() for c in raw.split(",") if c.strip() in KNOWN_CAPABILITIES)


@dataclass
class Member:
    """One participant of the room: identity, when it joined, attributes and LiveKit session id."""

    identity: str
    joined_at_ms: int
    attributes: dict[str, str] = field(default_factory=dict)
    # The LiveKit participant session: a reconnect of the same identity may get a new one.
    sid: str = ""

    @property
    def capabilities(self) -> frozenset[str]:
        return parse_capabilities(self.attributes.get(ATTR_CAPABILITIES))

    @property
    def role(self) -> str:
        return self.attributes.get(ATTR_ROLE, "browser")

    @property
    def prompt_grant(self) -> str | None:
        """The signed grant from the token (see steward.access.prompt_grant), if any."""
        return self.attributes.get(ATTR_CAN_PROMPT)

    def has(self, capability: str) -> bool:
        return capability in self.capabilities


def elect_host(
    members: list[Member],
    capability: str = "context",
    demoted: frozenset[str] = frozenset(),
    avoided: frozenset[str] = frozenset(),
) -> str | None:
    """Deterministic: earliest join among members with `capability` (and not demoted), then
    lowest identity; one `avoided` only when every other is."""
    capable = [m for m in members if m.has(capability) and m.identity not in demoted]
    preferred = [m for m in capable if m.identity not in avoided] or capable
    if not preferred:
        return None
    return min(preferred, key=lambda m: (m.joined_at_ms, m.identity)).identity


class Participants:
    """The room's members as the steward sees them, with debounced leaves and a host."""

    def __init__(
        self,
        on_host_changed: Callable[[str | None, str | None], None] | None = None,
        on_left: Callable[[str], None] | None = None,
        on_joined: Callable[[str], None] | None = None,
        *,
        leave_debounce_s: float = LEAVE_DEBOUNCE_S,
        reconnect_grace_s: float = RECONNECT_GRACE_S,
    ) -> None:
        self._members: dict[str, Member] = {}
        self._pending_leave: dict[str, asyncio.TimerHandle] = {}
        self._reconnecting = False
        self._suspects: set[str] = set()
        self._on_host_changed = on_host_changed
        self._on_left = on_left
        self._on_joined = on_joined
        self._leave_debounce_s = leave_debounce_s
        self._reconnect_grace_s = reconnect_grace_s
        self.host: str | None = None
        self.host_changes = 0
        # Browsers whose context answers kept failing: not asked, not host, until the time.
        self._demoted: dict[str, asyncio.TimerHandle] = {}
        # Browsers whose last answer failed (late, refused): asked after every other, host
        # only when no other can be, until the time.
        self._avoided: dict[str, asyncio.TimerHandle] = {}

    # --- queries -------------------------------------------------------------------------
    def get(self, identity: str) -> Member | None:
        return self._members.get(identity)

    def all(self) -> list[Member]:
        return list(self._members.values())

    def with_capability(self, capability: str) -> list[Member]:
        members = [
            m
            for m in self._members.values()
            if m.has(capability) and not (capability == "context" and m.identity in self._demoted)
        ]
        return sorted(members, key=lambda m: (m.joined_at_ms, m.identity))

    def appliers(self) -> list[str]:
        return [m.identity for m in self.with_capability("apply")]

    # --- events --------------------------------------------------------------------------
    def joined(
        self, identity: str, joined_at_ms: int, attributes: dict[str, str], sid: str = ""
    ) -> None:
        timer = self._pending_leave.pop(identity, None)
        if timer is not None:
            timer.cancel()
        self._suspects.discard(identity)
        existing = self._members.get(identity)
        if existing is not None:
            # A rejoin that never counted as a leave keeps its place in the host order.
            existing.attributes = dict(attributes)
            existing.sid = sid
        else:
            self._members[identity] = Member(identity, joined_at_ms, dict(attributes), sid)
            log.info("participant_joined", participant=identity)
            self._reelect()
            if self._on_joined is not None:
                self._on_joined(identity)
            return
        self._reelect()

    def attributes_changed(self, identity: str, attributes: dict[str, str]) -> None:
        member = self._members.get(identity)
        if member is not None:
            member.attributes = dict(attributes)
            self._reelect()

    def left(self, identity: str) -> None:
        if identity not in self._members:
            return
        if self._reconnecting:
            self._suspects.add(identity)
            return
        if identity in self._pending_leave:
            return
        loop = asyncio.get_running_loop()
        self._pending_leave[identity] = loop.call_later(
            self._leave_debounce_s, self._confirm_leave, identity
        )

    def connection_reconnecting(self) -> None:
        self._reconnecting = True

    def connection_reconnected(self, present: Callable[[], set[str]]) -> None:
        """After our own reconnect: whoever is not back after a grace period has left."""
        self._reconnecting = False
        loop = asyncio.get_running_loop()

        def reconcile() -> None:
            if self._reconnecting:
                return
            here = present()
            for identity in list(self._suspects):
                self._suspects.discard(identity)
                if identity not in here:
                    self._confirm_leave(identity)

        loop.call_later(self._reconnect_grace_s, reconcile)

    def _confirm_leave(self, identity: str) -> None:
        self._pending_leave.pop(identity, None)
        if self._members.pop(identity, None) is None:
            return
        log.info("participant_left", participant=identity)
        if self._on_left is not None:
            self._on_left(identity)
        self._reelect()

    def demote(self, identity: str, for_s: float) -> None:
        """Stop asking `identity` for context (and take the host role from it) for `for_s`."""
        self._until(self._demoted, identity, for_s)
        log.warning("host_demoted", participant=identity, for_s=for_s)
        self._reelect()

    def avoid(self, identity: str, for_s: float) -> None:
        """Ask `identity` for context after every other browser (and make it host only when
        no other can be) for `for_s`: its last answer failed."""
        self._until(self._avoided, identity, for_s)
        log.info("context_source_avoided", participant=identity, for_s=for_s)
        self._reelect()

    def _until(self, marks: dict[str, asyncio.TimerHandle], identity: str, for_s: float) -> None:
        old = marks.pop(identity, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        marks[identity] = loop.call_later(for_s, self._restore, marks, identity)

    def demoted(self) -> frozenset[str]:
        return frozenset(self._demoted)

    def avoided(self) -> frozenset[str]:
        return frozenset(self._avoided)

    def _restore(self, marks: dict[str, asyncio.TimerHandle], identity: str) -> None:
        if marks.pop(identity, None) is not None:
            self._reelect()

    def _reelect(self) -> None:
        new = elect_host(
            list(self._members.values()),
            demoted=frozenset(self._demoted),
            avoided=frozenset(self._avoided),
        )
        if new != self.host:
            old, self.host = self.host, new
            self.host_changes += 1
            log.info("host_changed", old=old, new=new)
            if self._on_host_changed is not None:
                self._on_host_changed(old, new)

    def close(self) -> None:
        for timer in [
            *self._pending_leave.values(),
            *self._demoted.values(),
            *self._avoided.values(),
        ]:
            timer.cancel()
        self._pending_leave.clear()
        self._demoted.clear()
        self._avoided.clear()
