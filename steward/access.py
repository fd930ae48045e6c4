"""Access tokens for participants, and the signed grant that lets one of them prompt.

A grant is the value of the `steward.can_prompt` attribute:
`v2.<scope>.<expires_at>.<nonce>.<mac>`, where scope is `p` (may prompt) or `pm` (may
prompt and moderate: cancel anyone's run), `expires_at` is Unix seconds, `nonce` is random
per minted token, and `mac` is a truncated HMAC-SHA256 over those fields plus room and
identity, each length-prefixed so no two (room, identity) pairs share an input.

Browsers may set their own attributes, so the steward also binds each grant to the
participant session (SID) that first presented it (`steward.room.inbound.grants`): a grant copied
into another connection, including the same user's later one, is refused.

Signing keys: `STEWARD_GRANT_SECRETS` (comma list; the first signs, every one verifies, so a
key is rotated by prepending the new one and dropping the old one once the longest grant
TTL has passed); unset, the LiveKit API secret signs.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from livekit import api
from livekit.api.access_token import Claims

from steward.protocol.names import ATTR_CAN_PROMPT, ATTR_CAPABILITIES, ATTR_ROLE

GRANT_VERSION = "v2"
GrantScope = Literal["p", "pm"]
_SCOPES: frozenset[str] = frozenset({"p", "pm"})
_NONCE = re.compile(r"^[A-Za-z0-9_-]{8,32}$")
_MAC_BYTES = 18
# Longest value `verify_grant` looks at: anything longer is refused unparsed.
MAX_GRANT_CHARS = 128


@dataclass(frozen=True)
class Grant:
    """A verified prompt grant: what it allows, when it expires and its nonce."""

    scope: GrantScope
    expires_at: int
    nonce: str

    @property
    def moderator(self) -> bool:
        return self.scope == "pm"


def _field(value: str) -> bytes:
    raw = value.encode()
    return len(raw).to_bytes(4, "big") + raw


def _mac(key: str, scope: str, room: str, identity: str, expires_at: int, nonce: str) -> str:
    message = b"".join(
        _field(f)
        for f in ("steward.grant", GRANT_VERSION, scope, room, identity, str(expires_at), nonce)
    )
    digest = hmac.new(key.encode(), message, hashlib.sha256).digest()[:_MAC_BYTES]
    return base64.urlsafe_b64encode(digest).decode()


def prompt_grant(
    key: str,
    *,
    room: str,
    identity: str,
    expires_at: int,
    scope: GrantScope = "p",
    nonce: str | None = None,
) -> str:
    """The `steward.can_prompt` value granting `scope` to `identity` in `room` until
    `expires_at` (Unix seconds)."""
    nonce = nonce or secrets.token_urlsafe(12)
    mac = _mac(key, scope, room, identity, expires_at, nonce)
    return f"{GRANT_VERSION}.{scope}.{expires_at}.{nonce}.{mac}"


def verify_grant(
    keys: Sequence[str],
    *,
    room: str,
    identity: str,
    value: str | None,
    now: float | None = None,
) -> Grant | None:
    """The grant `value` carries for `identity` in `room`, or None (forged, for someone or
    somewhere else, expired, another version, or not a grant at all). Never raises."""
    if not value or len(value) > MAX_GRANT_CHARS or not value.isascii():
        return None
    parts = value.split(".")
    if len(parts) != 5:
        return None
    version, scope, expires, nonce, mac = parts
    if version != GRANT_VERSION or scope not in _SCOPES or not _NONCE.match(nonce):
        return None
    if not expires.isdigit() or len(expires) > 12:
        return None
    expires_at = int(expires)
    if expires_at <= (time.time() if now is None else now):
        return None
    ok = False
    for key in keys:
        expected = _mac(key, scope, room, identity, expires_at, nonce)
        ok |= hmac.compare_digest(expected.encode(), mac.encode())
    if not ok:
        return None
    return Grant(scope="pm" if scope == "pm" else "p", expires_at=expires_at, nonce=nonce)


def mint_token(
    api_key: str,
    api_secret: str,
    *,
    room: str,
    identity: str,
    name: str | None = None,
    kind: str = "standard",
    can_prompt: bool = True,
    moderator: bool = False,
    capabilities: tuple[str, ...] = (),
    role: str = "browser",
    ttl: timedelta = timedelta(hours=6),
    grant_ttl: timedelta | None = None,
    grant_key: str | None = None,
) -> str:
    """A room-join token; prompting rights and capabilities travel as token attributes.

    The grant lasts `grant_ttl` (default: `ttl`), signed with `grant_key` (default: the API
    secret; pass the first of `STEWARD_GRANT_SECRETS` when those are set)."""
    attributes = {ATTR_ROLE: role}
    if can_prompt or moderator:
        expires_at = int(time.time() + (grant_ttl or ttl).total_seconds())
        attributes[ATTR_CAN_PROMPT] = prompt_grant(
            grant_key or api_secret,
            room=room,
            identity=identity,
            expires_at=expires_at,
            scope="pm" if moderator else "p",
        )
    if capabilities:
        attributes[ATTR_CAPABILITIES] = ",".join(capabilities)
    token = (
        api.AccessToken(api_key, api_secret)
        .with_identity(identity)
        .with_name(name or identity)
        .with_kind(kind)  # type: ignore[arg-type]
        .with_ttl(ttl)
        .with_attributes(attributes)
        .with_grants(
            api.VideoGrants(
                room_join=True,
                room=room,
                can_publish=True,
                can_subscribe=True,
                can_publish_data=True,
                can_update_own_metadata=True,
            )
        )
    )
    return str(token.to_jwt())


def reissue_token(claims: Claims, api_key: str, api_secret: str) -> str:
    """A token with `claims` (identity, grants, kind, attributes) signed with our key: how a
    worker joins a dispatched room with room options of its own (see `steward worker`)."""
    token = api.AccessToken(api_key, api_secret).with_identity(claims.identity)
    token.claims = claims
    return token.to_jwt()
