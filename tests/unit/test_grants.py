"""Prompt grants: unambiguous MAC input, expiry, rotation, and one session per grant."""

from __future__ import annotations

import asyncio

from steward.access import MAX_GRANT_CHARS, prompt_grant, verify_grant
from steward.room.inbound.grants import GrantBook
from steward.room.participants import Member

KEY = "k" * 40
NOW = 1_800_000_000


def grant(room: str = "r1", identity: str = "ann", **kw: object) -> str:
    return prompt_grant(KEY, room=room, identity=identity, expires_at=NOW + 60, **kw)  # type: ignore[arg-type]


def test_a_grant_verifies_for_its_room_and_identity_only() -> None:
    value = grant()
    got = verify_grant([KEY], room="r1", identity="ann", value=value, now=NOW)
    assert got is not None and got.scope == "p" and not got.moderator
    for room, identity, v in [
        ("r1", "eve", value),
        ("r2", "ann", value),
        ("r1", "ann", "true"),
        ("r1", "ann", None),
        ("r1", "ann", value[:-2] + "AA"),
        ("r1", "ann", value.replace(".p.", ".pm.")),
        ("r1", "ann", "v1." + value.split(".")[-1]),
        ("r1", "ann", "é" * 20),
        ("r1", "ann", "v2.p.1.x.y" + "z" * MAX_GRANT_CHARS),
    ]:
        assert verify_grant([KEY], room=room, identity=identity, value=v, now=NOW) is None


def test_room_and_identity_cannot_trade_characters() -> None:
    # The v1 MAC joined "prompt:{room}:{identity}": (team, x:mallory) == (team:x, mallory).
    value = prompt_grant(KEY, room="team", identity="x:mallory", expires_at=NOW + 60)
    assert verify_grant([KEY], room="team", identity="x:mallory", value=value, now=NOW)
    assert verify_grant([KEY], room="team:x", identity="mallory", value=value, now=NOW) is None


def test_a_grant_expires() -> None:
    value = grant()
    assert verify_grant([KEY], room="r1", identity="ann", value=value, now=NOW + 59)
    assert verify_grant([KEY], room="r1", identity="ann", value=value, now=NOW + 60) is None


def test_rotation_old_keys_verify_the_first_signs() -> None:
    old = prompt_grant("old" * 12, room="r1", identity="ann", expires_at=NOW + 60)
    new = prompt_grant("new" * 12, room="r1", identity="ann", expires_at=NOW + 60)
    keys = ["new" * 12, "old" * 12]
    assert verify_grant(keys, room="r1", identity="ann", value=old, now=NOW)
    assert verify_grant(keys, room="r1", identity="ann", value=new, now=NOW)
    assert verify_grant(["new" * 12], room="r1", identity="ann", value=old, now=NOW) is None


def test_moderator_scope() -> None:
    value = grant(scope="pm")
    got = verify_grant([KEY], room="r1", identity="ann", value=value, now=NOW)
    assert got is not None and got.moderator


async def test_a_grant_serves_the_first_session_that_presents_it() -> None:
    book = GrantBook("r1", [KEY], clock=lambda: NOW)
    value = grant()
    first = Member("ann", 1, {"steward.can_prompt": value}, sid="PA_1")
    assert book.check(first) is not None
    assert book.check(first) is not None
    # The same value set again by a later connection of hers (a token without a grant).
    later = Member("ann", 2, {"steward.can_prompt": value}, sid="PA_2")
    assert book.check(later) is None
    # A fresh grant (a new token) on that connection works.
    fresh = Member("ann", 2, {"steward.can_prompt": grant()}, sid="PA_2")
    assert book.check(fresh) is not None
    await asyncio.sleep(0)
