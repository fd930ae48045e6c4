"""The runtime never loads the tooling: importing every module of `steward` (and building the
`steward` command line, as the worker does) leaves `steward_tools` and `hypothesis` unloaded.

The probe runs in a fresh interpreter (this test process has both loaded already) and reports
what it sees twice: after the runtime, then after what `steward bench` does, where it must
see the tooling, or it would prove nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import importlib, json, pkgutil, sys

def tooling():
    return sorted(n for n in sys.modules if n.split(".")[0] in ("steward_tools", "hypothesis"))

import steward
for info in pkgutil.walk_packages(steward.__path__, "steward."):
    importlib.import_module(info.name)
import steward.cli
steward.cli.build_parser()
print(json.dumps(tooling()))
import steward_tools.bench.command
steward_tools.bench.command.build_parser()
print(json.dumps(tooling()))
"""


@pytest.fixture(scope="module")
def loaded() -> tuple[list[str], list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=240
    )
    runtime, bench = out.stdout.strip().splitlines()[-2:]
    return json.loads(runtime), json.loads(bench)


def test_runtime_and_cli_load_no_tooling(loaded: tuple[list[str], list[str]]) -> None:
    assert loaded[0] == []


def test_probe_sees_the_tooling_once_the_bench_parser_is_built(
    loaded: tuple[list[str], list[str]],
) -> None:
    assert "steward_tools.bench.fuzz_live" in loaded[1]
    assert "hypothesis" in loaded[1]
