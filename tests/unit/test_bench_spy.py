"""`bench scale --profile`: py-spy's collapsed stacks sorted into the steward's phases."""

from __future__ import annotations

import time
from pathlib import Path

from steward_tools.bench.spy import IDLE, OTHER, Sampler, classify, read_collapsed


def test_first_matching_phase_wins_over_the_leaf() -> None:
    # pydantic under the ack decode counts as the ack decode, not as envelope encode.
    ack = ["_on_data (steward/room/runtime.py:527)", "BaseModel.__init__ (pydantic/main.py:1)"]
    assert classify(ack) == "ack decode and flush"
    send = [
        "TurnDriver._ops (steward/turns/turn.py:260)",
        "Broadcaster._deliver (steward/room/outbound/broadcaster.py:240)",
        "Outbox.append (steward/store/outbox.py:90)",
        "Connection._do_execute (asyncpg/connection.py:2066)",
    ]
    assert classify(send) == "outbox INSERT"
    assert classify(["ActionStreamParser.feed (steward/model/parser.py:102)"]) == "parser"
    assert classify(["main (x.py:1)", "EpollSelector.select (selectors.py:468)"]) == IDLE
    assert classify(["main (x.py:1)"]) == OTHER


def test_collapsed_stacks_become_a_table(tmp_path: Path) -> None:
    path = tmp_path / "s.collapsed.txt"
    path.write_text(
        "run (a.py:1);EpollSelector.select (selectors.py:468) 30\n"
        "run (a.py:1);FfiClient.request (livekit/rtc/_ffi_client.py:307) 6\n"
        "run (a.py:1);Outbox.append (steward/store/outbox.py:90) 3\n"
        "run (a.py:1);helper (b.py:2) 1\n"
        "not a stack line\n"
    )
    table = read_collapsed(path)
    assert (table.total, table.busy) == (40, 10)
    rows = table.summary(top=2)
    assert [r["phase"] for r in rows] == ["LiveKit publish (FFI)", "outbox INSERT", OTHER]
    assert rows[0]["share_of_busy"] == 0.6
    assert "| LiveKit publish (FFI) | 60.0% |" in table.markdown(2)


def test_sampler_profiles_this_process(tmp_path: Path) -> None:
    sampler = Sampler(tmp_path, "self")
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        sum(i * i for i in range(1000))
    table = sampler.stop()
    assert table.total > 20, table.total
    assert sampler.svg.stat().st_size > 0
    assert (tmp_path / "self.phases.md").read_text().startswith("| phase |")
    # py-spy really sampled this process, not an empty file.
    assert "test_sampler_profiles_this_process" in sampler.collapsed.read_text()
