"""A participant owing an ack for a replay is replayed again once a resync request shows the
replay arrived (its ack of it was lost), and not before.

Seen in `steward bench faults --long`: a lossy browser was replayed one envelope, its ack of
it was lost, and with live traffic over it had nothing left to ack; every later resync it
sent was refused and the session's tail never reached it.
"""

from __future__ import annotations

from typing import Any

from steward.protocol.messages import Resync
from steward.protocol.names import RESYNC_ALL_SESSIONS
from steward.room.inbound.resync_requests import ResyncRequests
from steward.room.outbound.delivery.resync_gate import ResyncGate


class _Broadcaster:
    def __init__(self) -> None:
        self.gate = ResyncGate()
        self.replays: list[tuple[str, str, int]] = []

    async def resync(self, participant: str, session_id: str, last_seq: int) -> int:
        self.replays.append((participant, session_id, last_seq))
        return 1

    async def resync_room(self, participant: str, **_: Any) -> int:
        self.replays.append((participant, RESYNC_ALL_SESSIONS, 0))
        return 1


def _requests(broadcaster: _Broadcaster, rejected: list[str]) -> ResyncRequests:
    async def nothing(_: str) -> None:
        return None

    return ResyncRequests(
        broadcaster,  # type: ignore[arg-type]
        may_apply=lambda _: True,
        shared_document=lambda: False,
        resend_interrupted=nothing,
        reject=lambda _topic, who, reason, *_: rejected.append(f"{who}:{reason}"),
    )


async def test_a_resync_past_the_start_of_its_replay_counts_as_its_lost_ack() -> None:
    broadcaster, rejected = _Broadcaster(), []
    requests = _requests(broadcaster, rejected)
    broadcaster.gate.replayed("c2", [("s-1", 3), ("s-1", 4), ("s-2", 7)])
    # Still before the replay's first envelope of s-1: no proof, withheld.
    await requests.on_resync("c2", Resync(session_id="s-1", last_seq=2))
    # A whole-room request proves nothing either.
    await requests.on_resync("c2", Resync(session_id=RESYNC_ALL_SESSIONS, last_seq=1))
    # Another session's seq does not count for this one.
    await requests.on_resync("c2", Resync(session_id="s-2", last_seq=3))
    assert broadcaster.replays == []
    assert rejected == ["c2:unacked_resync"] * 3
    # It applied seq 3 of s-1, which only the replay gave it: the rest is replayed.
    await requests.on_resync("c2", Resync(session_id="s-1", last_seq=3))
    assert broadcaster.replays == [("c2", "s-1", 3)]
    assert not broadcaster.gate.owes_ack("c2")


async def test_a_participant_never_replayed_a_session_cannot_claim_receipt() -> None:
    gate = ResyncGate()
    gate.replayed("nick")  # an empty or untracked replay: no session to show receipt of
    assert gate.owes_ack("nick")
    assert not gate.shows_receipt("nick", "s-1", 50)
    assert not gate.shows_receipt("ann", "s-1", 50)
