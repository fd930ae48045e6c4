"""The fault suite at reduced size (`steward bench faults` runs the full size): lossy
clients with a forced reconnect, the host leaving, the steward SIGKILLed and restarted, and
Postgres restarted, each mid-stream. Nothing lost, duplicated or out of order; every canvas
equals the mirror rebuilt from the outbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from steward.store.embedded import EmbeddedPostgres
from steward_tools.bench.faults import STEPS, Tally, one_run
from steward_tools.livekit_server import LiveKitServer

pytestmark = [pytest.mark.integration, pytest.mark.faults, pytest.mark.timeout(180)]


async def test_no_action_lost_duplicated_or_reordered_under_faults(
    livekit_server: LiveKitServer, tmp_path: Path
) -> None:
    # A Postgres of its own: this test stops and starts it.
    pg = EmbeddedPostgres(tmp_path / "pg")
    db_url = await pg.astart()
    tally = Tally()
    try:
        await one_run(livekit_server, pg, db_url, tally, steps=STEPS, tokens_per_s=400.0)
    finally:
        pg.stop()
    assert tally.notes == []
    assert tally.runs == 1 and tally.actions > 20
    assert (tally.lost, tally.duplicated, tally.out_of_order) == (0, 0, 0)
    assert tally.canvases_identical
