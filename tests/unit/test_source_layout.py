"""House rules the source keeps: the formatter lays out the runtime, its tools and its tests,
no module reaches into another's private names, and every public class says what it is for."""

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


def _outside_modules(tree: ast.AST) -> set[str]:
    """Names bound by `import x` / `from x import y` of modules outside the project (the
    stdlib's typing names such as `argparse._SubParsersAction` have no public spelling)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {
                (a.asname or a.name).split(".")[0]
                for a in node.names
                if not a.name.startswith(PACKAGES)
            }
    return names


def _own(value: ast.expr) -> bool:
    """`self`, `cls` and `super()`: an object's own names."""
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def private_reads(path: Path) -> list[str]:
    """`obj._x` where obj is not the object's own (`self`, `cls`, `super()`)."""
    tree = ast.parse(path.read_text(), str(path))
    outside = _outside_modules(tree)
    return [
        f"{path.name}:{node.lineno} {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and _private(node.attr)
        and not _own(node.value)
        and not (isinstance(node.value, ast.Name) and node.value.id in outside)
    ]


def test_no_fmt_skip() -> None:
    skipped = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _sources(*PACKAGES)
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
        "from steward.room.outbound import broadcaster\n"
        "from steward.room.inbound.stream_inbox import _REFUSALS\n"
        "broadcaster._room_order()\n"
    )
    assert private_uses(sample) == [
        "sample.py:2 from steward.room.inbound.stream_inbox import _REFUSALS",
        "sample.py:3 broadcaster._room_order",
    ]


def test_tools_and_tests_touch_no_other_objects_private_names() -> None:
    """The benches time the runtime through `StageHooks`, not by replacing its internals."""
    reads = [r for p in _sources("steward_tools", "tests") for r in private_reads(p)]
    assert reads == []


def test_the_private_read_check_allows_only_own_names(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import argparse\n"
        "argparse._SubParsersAction\n"
        "self._a, cls._b, super()._c()\n"
        "runtime.broadcaster._publish = None\n"
    )
    assert private_reads(sample) == ["sample.py:4 runtime.broadcaster._publish"]


MAX_MODULE_LINES = 600


def long_modules(root: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """Modules under `root` longer than `limit` lines, as 'path: N lines'."""
    return [
        f"{p.relative_to(root.parent)}: {n} lines"
        for p in sorted(root.rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > limit
    ]


def test_no_module_in_steward_over_600_lines() -> None:
    assert long_modules(ROOT / "steward") == [], "split these by concept (one concept per module)"


def test_the_length_check_names_each_long_module(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "short.py").write_text("x = 1\n" * 3)
    (pkg / "sub" / "long.py").write_text("x = 1\n" * 4)
    assert long_modules(pkg, limit=3) == ["pkg/sub/long.py: 4 lines"]


def undocumented_classes(path: Path) -> list[str]:
    """Public classes (pydantic models and nested classes included) without a docstring."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{node.lineno}"
        f" {node.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and not node.name.startswith("_")
        and ast.get_docstring(node) is None
    ]


def test_every_public_class_has_a_docstring() -> None:
    missing = [c for p in _sources("steward", "steward_tools") for c in undocumented_classes(p)]
    assert missing == []


def test_the_docstring_check_names_each_bare_public_class(tmp_path: Path) -> None:
    mod = tmp_path / "mod.py"
    mod.write_text(
        "class Bare(BaseModel):\n    x: int\n\n"
        'class Told:\n    """Holds x."""\n\n'
        "class _Hidden:\n    pass\n\n"
        'class Outer:\n    """Holds Inner."""\n\n    class Inner:\n        pass\n'
    )
    assert undocumented_classes(mod) == ["mod.py:1 Bare", "mod.py:13 Inner"]
