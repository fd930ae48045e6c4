"""A child server whose free port was taken before it bound it is started on new ones."""

from __future__ import annotations

import pytest

from steward_tools.livekit_server import PORT_ATTEMPTS, start_on_free_ports


def test_a_taken_port_is_picked_again_and_other_failures_are_not_retried() -> None:
    tries: list[str] = []
    picks: list[int] = []

    def flaky() -> str:
        tries.append("try")
        if len(tries) < 2:  # redis-server's wording; livekit-server's is lower case
            raise RuntimeError("bind: Address already in use")
        return "up"

    assert start_on_free_ports(flaky, lambda: picks.append(1)) == "up"
    assert (len(tries), len(picks)) == (2, 1)

    def always_taken() -> str:
        raise RuntimeError("listen tcp 127.0.0.1:4000: bind: address already in use")

    picks.clear()
    with pytest.raises(RuntimeError, match="already in use"):
        start_on_free_ports(always_taken, lambda: picks.append(1))
    assert len(picks) == PORT_ATTEMPTS - 1

    def broken() -> str:
        raise RuntimeError("exited early: bad config")

    picks.clear()
    with pytest.raises(RuntimeError, match="bad config"):
        start_on_free_ports(broken, lambda: picks.append(1))
    assert picks == []
