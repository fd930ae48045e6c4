"""The re-dispatch watcher's sweep over fakes of the leases and of LiveKit's API: a lapse
another worker claimed is skipped, an empty room is released, a room with people gets the
dead steward removed and a new dispatch, and a LiveKit failure is logged for its room only."""

from __future__ import annotations

from typing import Any

from structlog.testing import capture_logs

from steward.room.workers.failover import FailoverWatcher


class FakeLeases:
    ttl_s = 6.0

    def __init__(self, rooms: list[str], claimed_elsewhere: set[str]) -> None:
        self.rooms = rooms
        self.claimed_elsewhere = claimed_elsewhere
        self.vacated: list[tuple[str, int]] = []

    async def unattended(self, horizon_s: float) -> list[str]:
        return list(self.rooms)

    async def claim_lapse(self, room_id: str, *, retry_s: float) -> int | None:
        assert retry_s >= 10.0
        return None if room_id in self.claimed_elsewhere else 7

    async def vacate(self, room_id: str, token: int) -> None:
        self.vacated.append((room_id, token))


class FakeRuns:
    def __init__(self, rooms: set[str]) -> None:
        self.rooms = rooms

    async def waiting(self, room_id: str) -> bool:
        return room_id in self.rooms


class FakeLiveKit:
    def __init__(self, people: dict[str, list[str]], down: set[str]) -> None:
        self.people = people
        self.down = down
        self.removed: list[tuple[str, str]] = []
        self.dispatched: list[str] = []

    async def browsers(self, room: str) -> list[str]:
        return self.people.get(room, [])

    async def remove(self, room: str, identity: str) -> bool:
        self.removed.append((room, identity))
        return True

    async def dispatch(self, room: str, *, reason: str) -> Any:
        if room in self.down:
            raise ConnectionError("livekit unreachable")
        self.dispatched.append(room)

    async def aclose(self) -> None:
        pass


async def test_a_sweep_acts_once_per_claimed_lapse_and_isolates_failures() -> None:
    rooms = ["failing", "elsewhere", "busy", "empty", "asked"]
    leases = FakeLeases(rooms, claimed_elsewhere={"elsewhere"})
    livekit = FakeLiveKit(
        {"failing": ["ann"], "elsewhere": ["bob"], "busy": ["cy"], "empty": []}, down={"failing"}
    )
    watcher = FailoverWatcher(
        leases,  # type: ignore[arg-type]
        livekit,  # type: ignore[arg-type]
        steward_identity="canvas-steward",
        runs=FakeRuns({"asked"}),  # type: ignore[arg-type]
    )
    with capture_logs() as logs:
        dispatched = await watcher.sweep()
    # Nobody is in `asked`, but an HTTP run waits there: it is dispatched, not released.
    assert dispatched == ["busy", "asked"]
    assert livekit.dispatched == ["busy", "asked"]
    # The dead steward goes before the new dispatch; never in a room another worker claimed.
    assert livekit.removed == [
        ("failing", "canvas-steward"),
        ("busy", "canvas-steward"),
        ("asked", "canvas-steward"),
    ]
    assert leases.vacated == [("empty", 7)]
    failed = [e for e in logs if e["event"] == "redispatch_failed"]
    assert [(e["room"], e["error"]) for e in failed] == [("failing", "livekit unreachable")]
    assert any(e["event"] == "room_vacated" and e["room"] == "empty" for e in logs)


async def test_the_watch_period_is_a_third_of_the_lease_at_most_a_second() -> None:
    leases = FakeLeases([], set())
    watcher = FailoverWatcher(
        leases, FakeLiveKit({}, set()), steward_identity="s", runs=FakeRuns(set())
    )  # type: ignore[arg-type]
    assert watcher.period_s == 1.0 and watcher.retry_s == 24.0  # a dead owner shows at once
    leases.ttl_s = 1.5
    watcher = FailoverWatcher(
        leases, FakeLiveKit({}, set()), steward_identity="s", runs=FakeRuns(set())
    )  # type: ignore[arg-type]
    assert watcher.period_s == 0.5 and watcher.retry_s == 10.0
