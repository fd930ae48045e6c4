"""A worker counts its own room slots: running jobs plus those accepted and not started."""

from __future__ import annotations

from steward.room.workers.worker_capacity import LAUNCH_S, WorkerCapacity


def test_an_idle_worker_takes_a_burst_up_to_its_slots_and_frees_them_as_jobs_end() -> None:
    running: set[str] = set()
    now = [0.0]
    capacity = WorkerCapacity(3, lambda: set(running), clock=lambda: now[0])
    # All at once, none started yet: each accepted request holds a slot, not the whole worker.
    assert [capacity.take(j) for j in ("a", "b", "c", "d")] == [True, True, True, False]
    running |= {"a", "b"}  # two started; "c" is still on its way
    assert capacity.load() == 2 / 3
    assert not capacity.take("d")
    running.discard("a")  # a room closed
    assert capacity.take("d")
    assert not capacity.take("e")


def test_an_accepted_job_that_never_starts_frees_its_slot_after_the_launch_window() -> None:
    now = [0.0]
    capacity = WorkerCapacity(1, set, clock=lambda: now[0])
    assert capacity.take("a")
    now[0] = LAUNCH_S - 1
    assert not capacity.take("b")
    now[0] = LAUNCH_S + 1  # its assignment went elsewhere or timed out
    assert capacity.take("b")


def test_a_job_already_running_here_is_not_taken_twice() -> None:
    capacity = WorkerCapacity(5, lambda: {"a"})
    assert not capacity.take("a")
    assert capacity.take("b")
