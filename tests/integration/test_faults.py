"""The fault suite at reduced size (`steward bench faults` runs the full size): lossy
clients with a forced reconnect, the host leaving, the steward SIGKILLed and restarted, and
Postgres restarted, each mid-stream. Every run ends done (the one a SIGKILL interrupts is asked
again); nothing lost, duplicated or out of order; every canvas equals the mirror rebuilt from
the outbox, the two applying with the browser's executor included."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from steward.store.embedded import EmbeddedPostgres
from steward_tools.bench.faults import STEPS, Tally, one_run
from steward_tools.livekit_server import LiveKitServer

pytestmark = [pytest.mark.integration, pytest.mark.faults, pytest.mark.timeout(180)]


async def test_no_action_lost_duplicated_or_reordered_under_faults(
    livekit_server: LiveKitServer,
) -> None:
    # A Postgres of its own: this test stops and starts it. Not under pytest's base temp,
    # which another pytest run on the machine closes to its user (0700) at its start: the
    # Postgres user could then no longer reach its own data to stop and start again.
    home = Path(tempfile.mkdtemp(prefix="steward-faults-pg-"))
    pg = EmbeddedPostgres(home)
    db_url = await pg.astart()
    tally = Tally()
    try:
        await one_run(livekit_server, pg, db_url, tally, steps=STEPS, tokens_per_s=400.0)
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)
    assert tally.notes == []
    assert tally.runs == 1 and tally.actions > 20 and tally.failed_steps == 0
    # Every run ended done, but the one the SIGKILL interrupted (asked again, and done).
    assert tally.interrupted_by_kill == 1
    assert tally.runs_done == tally.prompts - 1 == len(STEPS)
    assert (tally.lost, tally.duplicated, tally.out_of_order) == (0, 0, 0)
    assert tally.canvases_identical
    # The lossy client and the late joiner applied with the browser's own executor, and
    # agreed with the outbox mirror after every step.
    assert tally.executor_clients == 2 and tally.executor_identical
