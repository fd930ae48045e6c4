"""An action has one home: adding one is one file (its family's module) and one line in the
registry, and the rest of the runtime asks the spec instead of naming actions."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

from steward.actions.base import ActionSpec
from steward.actions.registry import ACTIONS

ROOT = Path(__file__).resolve().parents[2]
ACTIONS_DIR = ROOT / "steward" / "actions"
REGISTRY = ACTIONS_DIR / "registry.py"

# Modules that name actions by design, and why.
NAMES_ACTIONS = {
    # The mode table offers fairy actions by name (canvas and talk ones follow from the kind).
    "steward/fairies/modes.py",
    # One-shot runs do not record thoughts and messages as applied actions (a message is
    # kept by the turn's `said` hook); still to become a flag on the spec.
    "steward/fairies/one_shot.py",
}
# Packages of wire verbs, some spelt like the actions that emit them (align, delete, …).
WIRE_VERBS = ("steward/canvas/", "steward/protocol/")


def _family(spec: ActionSpec) -> ModuleType:
    return importlib.import_module(f"steward.actions.{spec.family}")


def _specs_in(module: ModuleType) -> list[ActionSpec]:
    return [v for v in vars(module).values() if isinstance(v, ActionSpec)]


def test_every_action_is_one_line_in_the_registry() -> None:
    tree = ast.parse(REGISTRY.read_text())
    listed = next(
        n.value
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and ast.unparse(n.target) == "_REGISTERED"
    )
    assert isinstance(listed, ast.Tuple)
    lines = [ast.unparse(e) for e in listed.elts]
    assert len({e.lineno for e in listed.elts}) == len(lines), "one action per line"
    assert len(lines) == len(set(lines)) == len(ACTIONS)
    for line, spec in zip(lines, ACTIONS.values(), strict=True):
        family, _, constant = line.partition(".")
        assert family == spec.family, f"{line} registers {spec.name!r} of {spec.family}"
        assert getattr(_family(spec), constant) is spec


def test_every_action_is_whole_in_its_family_module() -> None:
    for name, spec in ACTIONS.items():
        home = _family(spec).__name__
        parts = {"schema": spec.schema, "sanitize": spec.sanitize, "resolve": spec.resolve}
        if spec.effect is not None:
            parts["effect"] = spec.effect
        if spec.chat is not None:
            parts["chat"] = spec.chat
        for part, value in parts.items():
            assert value.__module__ == home, f"{name}: its {part} lives in {value.__module__}"
        assert (spec.kind == "fairy") == (spec.effect is not None), name


def test_no_action_module_is_left_out_of_the_registry() -> None:
    registered = set(map(id, ACTIONS.values()))
    for path in sorted(ACTIONS_DIR.glob("*.py")):
        module = importlib.import_module(f"steward.actions.{path.stem}")
        for spec in _specs_in(module):
            if path.stem != "registry":
                assert id(spec) in registered, f"{path.name}: {spec.name!r} is not registered"
                assert spec.family == path.stem, f"{spec.name!r} is in {path.name}"


def _strings(node: ast.AST) -> list[str] | None:
    """The strings of a literal tuple, list or set (also inside frozenset(...) / set(...))."""
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("frozenset", "set", "tuple"):
        return _strings(node.args[0]) if len(node.args) == 1 else None
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        return values if all(isinstance(v, str) for v in values) else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    return None


def _reads_an_action_name(node: ast.AST) -> bool:
    """`x.name`, `name`, `x["_type"]`, `x.get("_type")`, `normalize_name(...)`."""
    if isinstance(node, ast.Attribute):
        return node.attr == "name"
    if isinstance(node, ast.Name):
        return node.id == "name"
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.slice) == "'_type'"
    if isinstance(node, ast.Call):
        func = ast.unparse(node.func)
        first = ast.unparse(node.args[0]) if node.args else ""
        return (func.endswith(".get") and first == "'_type'") or func == "normalize_name"
    return False


def names_actions(source: str) -> list[int]:
    """Lines that decide by an action's name: a module-level set of action names, or an
    action's name compared with a literal one."""
    names = set(ACTIONS)
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module):
            for stmt in node.body:
                if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                    found = _strings(stmt.value)
                    if found and not isinstance(stmt.value, ast.Constant) and set(found) <= names:
                        lines.append(stmt.lineno)
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            literal = [s for s in sides if (found := _strings(s)) and set(found) <= names]
            if literal and any(_reads_an_action_name(s) for s in sides if s not in literal):
                lines.append(node.lineno)
    return lines


def test_the_runtime_asks_the_spec_instead_of_naming_actions() -> None:
    found = []
    for path in sorted((ROOT / "steward").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if path.parent == ACTIONS_DIR or rel in NAMES_ACTIONS or rel.startswith(WIRE_VERBS):
            continue  # the actions themselves (names, aliases), and the modules above
        found += [f"{rel}:{line}" for line in names_actions(path.read_text())]
    assert found == []


def test_the_name_rule_catches_what_it_should() -> None:
    assert names_actions('if spec.name == "message":\n    pass') == [1]
    assert names_actions('if data.get("_type") in ("create", "pen"):\n    pass') == [1]
    assert names_actions('X = frozenset({"start-project", "create-task"})') == [1]
    assert names_actions('if shape["type"] == "unknown":\n    pass') == []  # not an action
    assert names_actions('if intent in ("clear", "delete"):\n    pass') == []
