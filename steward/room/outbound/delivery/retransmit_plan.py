"""One pass of the retransmit loop, decided: what to resend, to whom, what to resync, whom to
give up on.

An unacked copy is resent only to the participant that has not acked it, once its wait has
passed: the participant's ack timeout (`AckClock`), doubled with every attempt. Each pass
resends at most `RETRANSMIT_BUDGET` envelopes per room, oldest first, so an overloaded room is
not buried under its own retransmits. After `attempts` retransmits the participant is resynced
once from the outbox for that session, from its oldest unacked seq, and those copies are not
retransmitted again. A participant that acked nothing for `GIVE_UP_S` since its oldest
unacked copy was first sent is given up on (it resyncs itself when it comes back); time spent
idle with nothing to ack never counts. A participant that `owes_ack` (replayed to and silent
since) gets no further replay and no retransmit of anything but that one replay's own copies:
a replay lost on the way must still arrive (else the browser, with nothing to ack, keeps its
gap for good), and that costs at most `attempts` resends of what was replayed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from steward.room.outbound.delivery.ack_clock import AckClock, backed_off
from steward.room.outbound.delivery.ack_tracker import AckTracker, Key, Pending

RETRANSMIT_BUDGET = 32
GIVE_UP_S = 60.0


@dataclass(frozen=True)
class GiveUp:
    """A participant the retransmit loop stops resending to: how much it left unacked, and in which
    sessions."""

    participant: str
    unacked: int
    sessions: list[str]


@dataclass
class RetransmitPlan:
    """One retransmit pass decided: what to resend to whom, what to resync, whom to give up on."""

    # (session, seq) → the participants to resend it to, and its payload.
    due: dict[Key, list[str]] = field(default_factory=dict)
    payloads: dict[Key, bytes] = field(default_factory=dict)
    # (participant, session) → the oldest seq it has not acked: resync from there.
    resyncs: dict[tuple[str, str], int] = field(default_factory=dict)
    gave_up: list[GiveUp] = field(default_factory=list)

    def groups(self) -> dict[tuple[str, ...], list[Key]]:
        """The due envelopes by the set of participants lagging on them, oldest first: one
        packet (or as few as fit) per set."""
        groups: dict[tuple[str, ...], list[Key]] = {}
        for key, lagging in sorted(self.due.items(), key=lambda kv: kv[0][1]):
            groups.setdefault(tuple(lagging), []).append(key)
        return groups


def plan_retransmits(
    tracker: AckTracker,
    now: float,
    *,
    floor_s: float,
    attempts: int,
    owes_ack: Callable[[str], bool],
) -> RetransmitPlan:
    """Decide one pass; marks the copies it resends (attempts, last sent) and clears the
    tables of participants it gives up on."""
    plan = RetransmitPlan()
    budget = RETRANSMIT_BUDGET
    for participant, entries in tracker.by_participant():
        clock = tracker.clock(participant, now)
        if entries and now - waiting_since(clock, entries) > GIVE_UP_S:
            plan.gave_up.append(GiveUp(participant, len(entries), sorted({k[0] for k in entries})))
            entries.clear()
            continue
        owing = owes_ack(participant)  # replayed to, silent since: only that replay
        rto = clock.timeout(floor_s)
        resent = False
        # Oldest first (dicts keep send order): the head of the gap unblocks the client.
        for key, p in list(entries.items()):
            if not p.sent or (owing and not p.replay):
                continue
            if p.attempts > attempts:  # resynced once already
                if now - p.last_sent > GIVE_UP_S:
                    del entries[key]
                continue
            if now - p.last_sent < backed_off(rto, p.attempts):
                continue
            if p.attempts == attempts:
                if owing:  # no second replay
                    continue
                first = plan.resyncs.setdefault((participant, key[0]), key[1])
                plan.resyncs[(participant, key[0])] = min(first, key[1])
                continue
            if budget <= 0:
                break
            budget -= 1
            p.attempts += 1
            p.last_sent = now
            plan.due.setdefault(key, []).append(participant)
            plan.payloads[key] = p.payload
            resent = True
        if resent:
            clock.timed_out()
    return plan


def waiting_since(clock: AckClock, entries: dict[Key, Pending]) -> float:
    """Since when the participant owes an ack: its last ack, or the first send of its oldest
    unacked copy if that came later (idle time owes nothing)."""
    oldest = min((p.first_sent for p in entries.values() if p.sent), default=clock.last_ack_at)
    return max(clock.last_ack_at, oldest)
