"""Every `steward bench` still prints the JSON it printed before its tools were regrouped:
each bench runs as an operator runs it, with a short budget, and its top-level keys and the
kind of each value must match `tests/golden/bench-shapes.json`.

The golden file holds what each bench printed before the rigs moved to `steward_tools/rigs/`
and the participant processes were folded into one (`python -m tests.integration.
test_bench_shapes OUT_DIR` writes it again from a run's outputs, one `NAME.json` per bench).
Values below the top level are left out: many are keyed by what a run saw (statuses,
refusal reasons, rooms), which a short run does not see the same way twice.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from steward.config import PROJECT_ROOT

GOLDEN = PROJECT_ROOT / "tests" / "golden" / "bench-shapes.json"

# name -> the `steward bench` arguments of a short run, and its time bound in seconds. The
# long benches are run whole by tests of their own (abuse: test_bench_abuse; faults:
# test_faults; the browsers' latency and scale: by operators), and left out here for time.
RUNS: dict[str, tuple[list[str], float]] = {
    "parse": (["parse", "--tokens", "400"], 120),
    "prompt": (["prompt", "--shapes", "50"], 120),
    "fuzz": (["fuzz", "--per-target", "10"], 180),
    "fuzz_live": (["fuzz", "--live", "--per-path", "8", "--limit-s", "15"], 300),
    "latency": (
        ["latency", "--clients", "2", "--prompts", "1", "--cold-prompts", "0", "--typing-ms", "0"],
        300,
    ),
    "failover": (["failover", "--workers", "2", "--rooms", "2"], 420),
    "conformance": (["conformance", "--outputs", "5", "--timeout", "120"], 300),
    "voice": (["voice", "--repeats", "1"], 420),
}


def kind(value: Any) -> str:
    """A JSON value's kind; a missing figure (null) counts as a number."""
    if isinstance(value, bool):
        return "bool"
    if value is None or isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "list" if isinstance(value, list) else "object"


def shape(result: dict[str, Any]) -> dict[str, str]:
    return {key: kind(value) for key, value in sorted(result.items())}


async def run_bench(args: list[str], timeout: float) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "steward.cli",
        "bench",
        *args,
        "--json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await asyncio.wait_for(proc.wait(), 30)
        raise
    assert proc.returncode == 0, err.decode()[-3000:]
    result: dict[str, Any] = json.loads(out)  # stdout is the JSON alone
    return result


def test_the_golden_file_names_every_run() -> None:
    assert sorted(json.loads(GOLDEN.read_text())) == sorted(RUNS)


def test_a_changed_shape_is_seen() -> None:
    before = shape({"actions": 3, "p95": None, "ok": True, "rooms": {}})
    assert shape({"actions": 3, "p95": 1.5, "ok": False, "rooms": {"r": 1}}) == before
    assert shape({"actions": "3", "p95": 1.5, "ok": True, "rooms": {}}) != before
    assert shape({"p95": 1.5, "ok": True, "rooms": {}}) != before


@pytest.mark.integration
@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.e2e] if "browsers" in n else []) for n in sorted(RUNS)],
)
async def test_each_bench_prints_the_json_it_printed_before(name: str) -> None:
    args, timeout = RUNS[name]
    result = await run_bench(args, timeout)
    assert "error" not in result, result["error"]
    assert shape(result) == json.loads(GOLDEN.read_text())[name]


def write_golden(outputs: Path) -> None:
    """The golden file from a run's outputs (`NAME.json` per bench in `outputs`)."""
    shapes = {name: shape(json.loads((outputs / f"{name}.json").read_text())) for name in RUNS}
    GOLDEN.write_text(json.dumps(shapes, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    write_golden(Path(sys.argv[1]))
