"""Who owns a run that no participant asked for: the HTTP API and the fairies.

A run's owner (`PromptInput.requester`) is the participant identity that asked for it, or a
name in the steward's own name space, `steward:<caller>` (`steward:http`, `steward:<fairy
id>`). LiveKit identities are free strings (a token's `sub`), so no character is out of a
participant's reach; the name space is the steward's rule instead: a participant whose
identity starts with `steward:` may neither prompt nor cancel, so it can never own, or act
as the owner of, a run of the HTTP API or a fairy.
"""

from __future__ import annotations

RESERVED_PREFIX = "steward:"
HTTP_OWNER = RESERVED_PREFIX + "http"
# What queued runs of an older steward recorded as their asker.
_LEGACY_HTTP_OWNER = "http"


def fairy_owner(fairy_id: str) -> str:
    return RESERVED_PREFIX + fairy_id


def is_reserved(identity: str) -> bool:
    """Whether `identity` is in the steward's own name space (never a participant's)."""
    return identity.startswith(RESERVED_PREFIX)


def queued_owner(asker: str) -> str:
    """The owner of a run taken from the queue (rows queued before the name space existed
    said `http`)."""
    return HTTP_OWNER if asker == _LEGACY_HTTP_OWNER else asker
