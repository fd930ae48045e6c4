"""Access tokens for participants (steward, browsers, voice agents, test clients)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import timedelta

from livekit import api

from steward.protocol.names import ATTR_CAN_PROMPT, ATTR_CAPABILITIES, ATTR_ROLE


def prompt_grant(api_secret: str, *, room: str, identity: str) -> str:
    """The value of `steward.can_prompt` that grants prompting to `identity` in `room`.

    Browsers may update their own attributes, so a plain "true" could be forged; an HMAC
    over room and identity with the API secret cannot, and cannot be copied to another
    participant or room.
    """
    mac = hmac.new(api_secret.encode(), f"prompt:{room}:{identity}".encode(), hashlib.sha256)
    return "v1." + base64.urlsafe_b64encode(mac.digest()[:18]).decode()


def verify_prompt_grant(api_secret: str, *, room: str, identity: str, value: str | None) -> bool:
    if not value:
        return False
    expected = prompt_grant(api_secret, room=room, identity=identity)
    return hmac.compare_digest(expected.encode(), value.encode())


def mint_token(
    api_key: str,
    api_secret: str,
    *,
    room: str,
    identity: str,
    name: str | None = None,
    kind: str = "standard",
    can_prompt: bool = True,
    capabilities: tuple[str, ...] = (),
    role: str = "browser",
    ttl: timedelta = timedelta(hours=6),
) -> str:
    """A room-join token; prompting rights and capabilities travel as token attributes."""
    attributes = {ATTR_ROLE: role}
    if can_prompt:
        attributes[ATTR_CAN_PROMPT] = prompt_grant(api_secret, room=room, identity=identity)
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
