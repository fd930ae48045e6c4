"""`steward demo --headless --json` end to end, as a user runs it (its own LiveKit and Postgres)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_demo_prints_one_json_object_and_everything_converges(tmp_path: Path) -> None:
    env = {**os.environ, "STEWARD_DATA_DIR": str(tmp_path), "STEWARD_LOG_LEVEL": "warning"}
    env.pop("DATABASE_URL", None)
    proc = subprocess.run(
        [sys.executable, "-m", "steward.cli", "demo", "--headless", "--json"],
        env=env,
        capture_output=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    report = json.loads(proc.stdout)
    assert report["rooms"] == 1 and report["clients_per_room"] == 3
    assert report["sessions"] >= 1 and report["actions_sent"] > 0
    applied = report["actions_applied_per_client"]
    assert len(applied) == 3 and len(set(applied)) == 1 and applied[0] > 0
    assert report["duplicates_applied"] == 0 and report["out_of_order_applied"] == 0
    assert report["canvases_identical"] is True
    assert report["mirror_matches_clients"] is True
    # First-run sentences from two tabs with different views, then the project: the quality
    # report's targets.
    assert len(report["runs"]) >= 10 and all(r["outcome"] == "done" for r in report["runs"])
    assert {r["asker"] for r in report["runs"]} == {"browser-1", "browser-2"}
    totals = report["quality_totals"]
    for key in (
        "unintended_overlaps",
        "overflowing_text",
        "loose_arrows",
        "outside_bounds",
        "locked_or_partial",
        "destructive_outside_clear",
    ):
        assert totals[key] == 0, (key, totals, report["runs"])
    assert set(report["project"]["quality"]) <= set(totals)
    project = report["project"]
    assert project["status"] == "done" and project["drones"] >= 2 and project["tasks"] >= 2
    assert project["history_tokens_orchestrator"] < project["history_tokens_unfiltered"]
    # Everything it started, it stopped: no livekit-server child left behind.
    leftovers = subprocess.run(
        ["pgrep", "-f", f"steward-lk-.*{tmp_path.name}"], capture_output=True
    ).stdout
    assert not leftovers
