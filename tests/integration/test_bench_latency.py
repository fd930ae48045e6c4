"""`steward bench latency --json` over a real livekit-server and Postgres, run as an operator
runs it: the action figures and, from the same run, raw LiveKit delivery to the same clients
with the p95-over-p95 ratios computed from the printed figures."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytestmark = pytest.mark.integration


async def test_the_latency_bench_reports_raw_delivery_beside_the_actions() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "steward.cli",
        "bench",
        "latency",
        "--json",
        "--clients",
        "2",
        "--prompts",
        "1",
        "--cold-prompts",
        "0",
        "--typing-ms",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 280)
    assert proc.returncode == 0, err.decode()[-2000:]
    result = json.loads(out)
    assert result["statuses"] == ["done"] and result["errors"] == []
    assert result["actions"] > 0 and result["actions_not_applied_everywhere"] == 0
    assert result["canvases_identical"]
    e2e, overhead, raw = result["e2e_ms"], result["overhead_ms"], result["raw_ms"]
    assert raw["n"] == result["raw_probes"] > 0  # sent while the actions' envelopes flowed
    assert result["raw_not_delivered_everywhere"] == 0
    assert 0 < raw["p50"] <= raw["p95"] <= raw["p99"]
    assert result["raw_probe_bytes"]["p50"] > 100  # an envelope's size, not an empty packet
    assert result["e2e_over_raw"] == round(e2e["p95"] / raw["p95"], 2)
    assert result["overhead_over_raw"] == round(overhead["p95"] / raw["p95"], 2)
    assert result["targets"]["e2e_over_raw"] == 1.5
    assert result["targets"]["overhead_over_raw"] == 0.25
