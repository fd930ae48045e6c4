"""Imports run one way: the tier table of docs/ARCHITECTURE.md is the rule, read from there.

A module may import its own package and packages of lower tiers; never a package of its own
tier (so `room` and `fairies` never import each other) nor a higher one. The one exception
is the CLI front: `steward.commands` imports the tooling (`steward_tools`) only inside a
command's function or for type checking, so loading the runtime never loads the tooling
(test_runtime_imports checks that at run time).

Inside `steward.room` the parts (its folders by direction and the modules at its own level)
have ranks, from the doc's second table: a part imports itself and parts of lower rank only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from steward.config import PROJECT_ROOT

DOC = PROJECT_ROOT / "docs" / "ARCHITECTURE.md"
ROW = re.compile(r"^\|\s*(\d+)\s*\|([^|]*)\|")
ROOM_ROW = re.compile(r"^\s+\|\s*(\d+)\s*\|([^|]*)\|")  # the indented table of the room's parts
LAZY_OK = ("steward.commands", "steward_tools")  # (importer package, imported package)


def tiers() -> dict[str, int]:
    """Package -> tier, from the doc's table rows `| N | `a`, `b` | ... |`."""
    out: dict[str, int] = {}
    for line in DOC.read_text().splitlines():
        if match := ROW.match(line):
            for name in re.findall(r"`([\w.]+)`", match.group(2)):
                assert name not in out, f"{name} stands in two tiers of {DOC.name}"
                out[name] = int(match.group(1))
    return out


def room_ranks() -> dict[str, int]:
    """Part of `steward.room` -> rank, from the doc's indented table `  | N | `a`, `b` |`."""
    out: dict[str, int] = {}
    for line in DOC.read_text().splitlines():
        if match := ROOM_ROW.match(line):
            for name in re.findall(r"`(\w+)`", match.group(2)):
                assert name not in out, f"{name} stands in two ranks of {DOC.name}"
                out[name] = int(match.group(1))
    return out


def room_part_of(module: str) -> str | None:
    """`steward.room.inbound.intake` -> `inbound`; `steward.room.runtime` -> `runtime`."""
    parts = module.split(".")
    if parts[:2] != ["steward", "room"] or len(parts) < 3:
        return None
    return parts[2]


def room_violations(imports: Iterable[Import], rank: dict[str, int]) -> list[str]:
    out = []
    for imp in imports:
        src, dst = room_part_of(imp.importer), room_part_of(imp.target)
        if src is None or dst is None or src == dst:
            continue
        if rank[dst] >= rank[src]:
            ranks_seen = f"{src} rank {rank[src]} -> {dst} rank {rank[dst]}"
            out.append(f"{imp.importer}:{imp.line} imports {imp.target} ({ranks_seen})")
    return out


def package_of(module: str) -> str | None:
    """`steward.room.runtime` -> `steward.room`; `steward_tools.bench.x` -> `steward_tools`."""
    parts = module.split(".")
    if parts[0] == "steward_tools":
        return "steward_tools"
    if parts[0] == "steward" and len(parts) > 1:
        return f"steward.{parts[1]}"
    return None


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int
    lazy: bool  # inside a function or under `if TYPE_CHECKING`


def _imports(module: str, tree: ast.AST) -> Iterator[Import]:
    def visit(node: ast.AST, lazy: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(module, alias.name, child.lineno, lazy)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                yield Import(module, child.module, child.lineno, lazy)
            nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) or (
                isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            )
            yield from visit(child, lazy or nested)

    yield from visit(tree, False)


def all_imports() -> Iterator[Import]:
    for root in ("steward", "steward_tools"):
        for path in sorted((PROJECT_ROOT / root).rglob("*.py")):
            module = ".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            yield from _imports(module, ast.parse(path.read_text(), str(path)))


def violations(imports: Iterable[Import], rank: dict[str, int]) -> list[str]:
    out = []
    for imp in imports:
        src, dst = package_of(imp.importer), package_of(imp.target)
        if src is None or dst is None or src == dst:
            continue
        if (src, dst) == LAZY_OK and imp.lazy:
            continue
        if rank[dst] >= rank[src]:
            tiers_seen = f"{src} tier {rank[src]} -> {dst} tier {rank[dst]}"
            out.append(f"{imp.importer}:{imp.line} imports {imp.target} ({tiers_seen})")
    return out


def test_every_package_has_one_tier() -> None:
    rank = tiers()
    packages = {p for imp in all_imports() if (p := package_of(imp.importer)) is not None}
    assert packages - set(rank) == set(), "place these packages in the table of ARCHITECTURE.md"
    assert set(rank) - packages == set(), "the table names packages that do not exist"


def test_imports_run_down_the_tiers() -> None:
    assert violations(all_imports(), tiers()) == []


def test_the_rule_refuses_what_it_should() -> None:
    rank = tiers()
    code = {
        "steward.room.x": "from steward.fairies import runtime",  # same tier or upward
        "steward.protocol.x": "import steward.service",  # upward
        "steward.service": "from steward_tools.bench import harness",  # runtime -> tooling
        "steward.commands.x": "import steward_tools.bench",  # at module level
        "steward.commands.y": "def run():\n    import steward_tools.bench",  # lazy: allowed
    }
    found = violations((i for m, c in code.items() for i in _imports(m, ast.parse(c))), rank)
    assert [v.split(":")[0] for v in found] == [
        "steward.room.x",
        "steward.protocol.x",
        "steward.service",
        "steward.commands.x",
    ]


def test_every_part_of_the_room_has_one_rank() -> None:
    parts = {p for imp in all_imports() if (p := room_part_of(imp.importer)) and p != "__init__"}
    rank = room_ranks()
    assert parts - set(rank) == set(), "place these parts of steward.room in the room's table"
    assert set(rank) - parts == set(), "the room's table names parts that do not exist"


def test_the_rooms_imports_run_by_direction() -> None:
    assert room_violations(all_imports(), room_ranks()) == []


def test_the_room_rule_refuses_what_it_should() -> None:
    rank = room_ranks()
    code = {
        "steward.room.outbound.x": "from steward.room.inbound.intake import Intake",  # upward
        "steward.room.inbound.x": "from steward.room.context import views",  # upward
        "steward.room.workers.x": "from steward.room.outbound import relay",  # same rank
        "steward.room.context.x": "from steward.room.runs.sessions import RoomSessions",
        "steward.room.runs.x": "from steward.room.context.views import Views",  # downward: ok
        "steward.room.runtime": "from steward.room.runs import revert",  # downward: ok
    }
    found = room_violations((i for m, c in code.items() for i in _imports(m, ast.parse(c))), rank)
    assert [v.split(":")[0] for v in found] == [
        "steward.room.outbound.x",
        "steward.room.inbound.x",
        "steward.room.workers.x",
        "steward.room.context.x",
    ]


# -- inside the fairies ------------------------------------------------------------------
# The runtime schedules the fairies; the request runner, the actions' effects and resume call
# back on it through the scheduler port (`steward/fairies/scheduler.py`) with its
# dependencies (`deps.py`), so only the one-shot facade, which hands prompts to it, imports it.
RUNTIME = "steward.fairies.runtime"
RUNTIME_IMPORTERS = {"steward.fairies.one_shot_runner"}
# The kinds of request are data every other module reads: they read nothing of the fairies.
LEAVES = {"steward.fairies.kinds"}


def fairies_graph(imports: Iterable[Import]) -> dict[str, set[str]]:
    """Module -> the modules of `steward.fairies` it imports (type-only imports too)."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if imp.importer.startswith("steward.fairies") and imp.target.startswith("steward.fairies."):
            graph.setdefault(imp.importer, set()).add(imp.target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def _fairies_imports() -> list[Import]:
    # `from steward.fairies import x` names module x: count it as importing that module.
    out = list(all_imports())
    for path in sorted((PROJECT_ROOT / "steward" / "fairies").glob("*.py")):
        module = "steward.fairies." + path.stem
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module == "steward.fairies":
                out += [
                    Import(module, f"steward.fairies.{a.name}", node.lineno, False)
                    for a in node.names
                ]
    return out


def test_the_fairies_import_no_cycle() -> None:
    assert cycles(fairies_graph(_fairies_imports())) == []


def test_only_the_facade_imports_the_runtime() -> None:
    graph = fairies_graph(_fairies_imports())
    importers = {m for m, targets in graph.items() if RUNTIME in targets}
    assert importers <= RUNTIME_IMPORTERS


def test_the_kinds_read_nothing_of_the_fairies() -> None:
    graph = fairies_graph(_fairies_imports())
    assert {m: graph[m] for m in LEAVES if graph.get(m)} == {}


def test_a_cycle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# Choosing a provider may name the scripted model; building a request never reads its hints.
MAY_NAME_THE_SCRIPTED_MODEL = {"steward.fairies.role_models"}


def test_the_request_path_does_not_import_the_scripted_model() -> None:
    """The scripted model reads what it needs off `CanvasFacts` (its port in `model.base`);
    the prompt, the turn core and the fairies hand those over without importing it."""
    found = [
        f"{imp.importer}:{imp.line} imports {imp.target}"
        for imp in all_imports()
        if imp.target.startswith("steward.model.scripted")
        and imp.importer.startswith(("steward.prompt", "steward.turns", "steward.fairies"))
        and imp.importer not in MAY_NAME_THE_SCRIPTED_MODEL
    ]
    assert found == []


# -- inside the tooling ------------------------------------------------------------------
# Rigs (fake model servers, responders, fuzz inputs, participant processes) serve the tests
# and the benches alike, so they stand apart from the benchmarks: a bench may use a rig, a
# rig never reads a bench, not even inside a function. What both need lives in a rig or at
# `steward_tools`' own level (`process_usage`, `waiting`, `child_process`).
RIGS, BENCH = "steward_tools.rigs", "steward_tools.bench"


def rig_violations(imports: Iterable[Import]) -> list[str]:
    return [
        f"{imp.importer}:{imp.line} imports {imp.target}"
        for imp in imports
        if (imp.importer == RIGS or imp.importer.startswith(RIGS + "."))
        and (imp.target == BENCH or imp.target.startswith(BENCH + "."))
    ]


def test_rigs_import_nothing_of_the_benches() -> None:
    assert rig_violations(all_imports()) == []


def test_the_rig_rule_refuses_what_it_should() -> None:
    code = {
        "steward_tools.rigs.x": "from steward_tools.bench.harness import Stack",
        "steward_tools.rigs.y": "def f():\n    import steward_tools.bench.raw",  # lazy too
        "steward_tools.rigs.z": "from steward_tools.bench import harness",
        "steward_tools.bench.x": "from steward_tools.rigs.participant import run",  # ok
        "steward_tools.rigs.w": "from steward_tools.process_usage import rss_mb",  # ok
    }
    found = rig_violations(i for m, c in code.items() for i in _imports(m, ast.parse(c)))
    assert [v.split(":")[0] for v in found] == [
        "steward_tools.rigs.x",
        "steward_tools.rigs.y",
        "steward_tools.rigs.z",
    ]
