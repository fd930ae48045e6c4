"""An action has one home: adding one is one file (its own module in its family's package)
and one line in the registry, and the rest of the runtime asks the spec instead of naming
actions."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import steward.actions
from steward.actions import registry
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


def module_name(action: str) -> str:
    """`bringToFront` -> `bring_to_front`, `start-project` -> `start_project`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", action).replace("-", "_").lower()


def _home(spec: ActionSpec) -> str:
    return f"steward.actions.{spec.family}.{module_name(spec.name)}"


def _specs_in(module: ModuleType) -> list[ActionSpec]:
    return [v for v in vars(module).values() if isinstance(v, ActionSpec)]


def _action_modules() -> list[ModuleType]:
    """Every module of steward/actions and its family packages, but the registry."""
    found = pkgutil.walk_packages(steward.actions.__path__, "steward.actions.")
    return [importlib.import_module(m.name) for m in found if m.name != registry.__name__]


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
    imported = {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    for line, spec in zip(lines, ACTIONS.values(), strict=True):
        assert imported.get(line) == _home(spec), f"{line} is not imported from {_home(spec)}"
        assert getattr(registry, line) is spec


def test_every_action_lives_in_its_own_module_named_for_it() -> None:
    for name, spec in ACTIONS.items():
        module = importlib.import_module(_home(spec))
        assert _specs_in(module) == [spec], f"{module.__name__} must hold {name!r} alone"


def test_every_action_is_whole_in_its_family_package() -> None:
    """Its parts are in its module, or in a module its family shares (never another's)."""
    for name, spec in ACTIONS.items():
        family = f"steward.actions.{spec.family}."
        parts = {"schema": spec.schema, "sanitize": spec.sanitize, "resolve": spec.resolve}
        if spec.effect is not None:
            parts["effect"] = spec.effect
        if spec.chat is not None:
            parts["chat"] = spec.chat
        for part, value in parts.items():
            home = value.__module__
            assert home.startswith(family), f"{name}: its {part} lives in {home}"
            assert not _specs_in(importlib.import_module(home)) or home == _home(spec), (
                f"{name}: its {part} lives in another action's module, {home}"
            )
        assert (spec.kind == "fairy") == (spec.effect is not None), name


def test_no_action_module_is_left_out_of_the_registry() -> None:
    registered = set(map(id, ACTIONS.values()))
    modules = _action_modules()
    assert len([m for m in modules if _specs_in(m)]) == len(ACTIONS)
    for module in modules:
        for spec in _specs_in(module):
            assert id(spec) in registered, f"{module.__name__}: {spec.name!r} is not registered"
            assert module.__name__ == _home(spec), f"{spec.name!r} is in {module.__name__}"


def test_the_module_name_rule() -> None:
    assert module_name("bringToFront") == "bring_to_front"
    assert module_name("update-todo-list") == "update_todo_list"
    assert module_name("create") == "create"


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
        if ACTIONS_DIR in path.parents or rel in NAMES_ACTIONS or rel.startswith(WIRE_VERBS):
            continue  # the actions themselves (names, aliases), and the modules above
        found += [f"{rel}:{line}" for line in names_actions(path.read_text())]
    assert found == []


def test_the_name_rule_catches_what_it_should() -> None:
    assert names_actions('if spec.name == "message":\n    pass') == [1]
    assert names_actions('if data.get("_type") in ("create", "pen"):\n    pass') == [1]
    assert names_actions('X = frozenset({"start-project", "create-task"})') == [1]
    assert names_actions('if shape["type"] == "unknown":\n    pass') == []  # not an action
    assert names_actions('if intent in ("clear", "delete"):\n    pass') == []
