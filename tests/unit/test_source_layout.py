"""House rules the source keeps: the formatter lays out the runtime, and no module reaches
into another's private names (issue 17)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("steward", "steward_tools", "tests")


def _sources(*packages: str) -> list[Path]:
    return sorted(p for pkg in packages for p in (ROOT / pkg).rglob("*.py"))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(path: Path) -> list[str]:
    """`from <project module> import _x` and `<imported module>._x` in one file."""
    tree = ast.parse(path.read_text(), str(path))
    modules: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGES):
            for alias in node.names:
                if _private(alias.name) or any(_private(p) for p in node.module.split(".")):
                    found.append(
                        f"{path.name}:{node.lineno} from {node.module} import {alias.name}"
                    )
                modules.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            found.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
    return found


def test_the_runtime_has_no_fmt_skip() -> None:
    skipped = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _sources("steward")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if line.rstrip().endswith("# fmt: skip")
    ]
    assert skipped == [], "give the call keyword arguments instead of skipping the formatter"


def test_no_module_imports_another_modules_private_names() -> None:
    uses = [u for p in _sources(*PACKAGES) for u in private_uses(p)]
    assert uses == []


def test_the_private_name_check_finds_both_forms(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from steward.room import broadcaster\n"
        "from steward.room.stream_inbox import _REFUSALS\n"
        "broadcaster._room_order()\n"
    )
    assert private_uses(sample) == [
        "sample.py:2 from steward.room.stream_inbox import _REFUSALS",
        "sample.py:3 broadcaster._room_order",
    ]
