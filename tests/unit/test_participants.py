"""Host election and membership across the steward's own reconnects (room/participants)."""

from __future__ import annotations

import pytest

from steward.room.participants import LEAVE_DEBOUNCE_S, Member, Participants, elect_host
from tests.support.clock import LoopClock


def member(identity: str, joined: int, caps: str = "context,screenshot,apply") -> Member:
    return Member(identity, joined, {"steward.capabilities": caps})


def test_host_is_earliest_capable_then_lowest_identity() -> None:
    members = [member("zed", 5), member("amy", 9), member("bob", 5), member("eve", 1, "apply")]
    assert elect_host(members) == "bob"  # eve joined first but cannot give context
    assert elect_host([member("eve", 1, "apply")]) is None
    assert elect_host(list(reversed(members))) == "bob"  # order-independent


async def test_steward_reconnect_does_not_make_the_host_flap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = LoopClock(monkeypatch)
    changes: list[tuple[str | None, str | None]] = []
    p = Participants(lambda old, new: changes.append((old, new)), reconnect_grace_s=0.05)
    p.joined("alice", 1, {"steward.capabilities": "context"})
    p.joined("bob", 2, {"steward.capabilities": "context"})
    assert p.host == "alice" and changes == [(None, "alice")]
    # Full reconnect: the SDK reports everyone gone, then re-adds them.
    p.connection_reconnecting()
    p.left("alice")
    p.left("bob")
    p.connection_reconnected(lambda: {"alice", "bob"})
    p.joined("bob", 2, {"steward.capabilities": "context"})
    p.joined("alice", 1, {"steward.capabilities": "context"})
    await clock.advance(0.1)  # past the grace: the reconcile has run
    assert p.host == "alice" and changes == [(None, "alice")]
    # A real leave: the next capable browser becomes host after the short debounce.
    p.left("alice")
    await clock.advance(LEAVE_DEBOUNCE_S * 0.9)
    assert p.host == "alice"
    await clock.advance(LEAVE_DEBOUNCE_S * 0.2)
    assert p.host == "bob" and changes[-1] == ("alice", "bob")


async def test_who_is_not_back_after_our_reconnect_has_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = LoopClock(monkeypatch)
    p = Participants(reconnect_grace_s=0.05)
    p.joined("alice", 1, {"steward.capabilities": "context"})
    p.joined("bob", 2, {"steward.capabilities": "context"})
    p.connection_reconnecting()
    p.left("alice")
    p.left("bob")
    p.connection_reconnected(lambda: {"bob"})
    await clock.advance(0.15)
    assert p.get("alice") is None and p.host == "bob"


async def test_an_avoided_browser_hosts_only_when_no_other_can_and_a_demoted_one_never(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = LoopClock(monkeypatch)
    p = Participants()
    p.joined("hal", 1, {"steward.capabilities": "context"})
    p.joined("carl", 2, {"steward.capabilities": "context"})
    p.avoid("hal", 0.05)
    assert p.host == "carl" and p.avoided() == {"hal"}
    p.avoid("carl", 0.05)  # both avoided: the earliest again, rather than none
    assert p.host == "hal"
    await clock.advance(0.1)  # both marks ran out
    assert p.host == "hal" and not p.avoided()
    p.demote("hal", 10)
    p.avoid("carl", 10)
    assert p.host == "carl"  # avoided, but the only one not demoted
    p.close()
