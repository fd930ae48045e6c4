"""Access tokens for participants (steward, browsers, voice agents, test clients)."""

from __future__ import annotations

from datetime import timedelta

from livekit import api

from steward.protocol.names import ATTR_CAN_PROMPT, ATTR_CAPABILITIES, ATTR_ROLE


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
    attributes = {ATTR_ROLE: role, ATTR_CAN_PROMPT: "true" if can_prompt else "false"}
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
