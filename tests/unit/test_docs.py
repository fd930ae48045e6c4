"""The docs are written for users and name only what exists.

README.md, CHANGELOG.md and every docs/**/*.md: no issue numbers, no development sessions,
no path outside the repository; the same holds for what users read in the code: every
docstring of steward/ and steward_tools/ and every help text of the CLI (an upstream
project's issue, `livekit/agents issue 1472`, may be cited). README.md and docs/**/*.md
also name only code that exists: backticked files and folders, dotted Python names
(`steward.x.y`, `Class.attr`), bare class names and constants, `steward` command lines
(checked against the CLI's own parsers) and settings (`STEWARD_*` against `Settings`). A
renamed module or class fails here with the doc, line and name to fix. README.md stays short
enough to read in one go; detail goes to docs/.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import importlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from steward.config import Settings

ROOT = Path(__file__).resolve().parents[2]
# What a fresh clone holds; generated or downloaded trees are not the repository's.
SKIP_DIRS = {".git", ".venv", ".tools", ".data", "node_modules", "dist", "__pycache__"}
SKIP_DIRS |= {".mypy_cache", ".ruff_cache", ".pytest_cache", "test-results"}


def _doc_paths() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _all_doc_paths() -> list[Path]:
    changelog = ROOT / "CHANGELOG.md"
    return _doc_paths() + ([changelog] if changelog.exists() else [])


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


# ---------------------------------------------------------------- reading the docs

_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"`([^`\n]+)`")


def _lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, inside a fenced code block)."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        yield number, line, fenced


def _spans(path: Path) -> Iterator[tuple[int, str]]:
    """Every backticked span outside fenced blocks."""
    for number, line, fenced in _lines(path):
        if not fenced:
            for match in _SPAN.finditer(line):
                yield number, match.group(1).strip()


# ---------------------------------------------------------------- words users do not need

_ORDINALS = (
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
    r"thirteenth|fourteenth|fifteenth|\d+(?:st|nd|rd|th)"
)
_DIARY = [
    (re.compile(r"\bissues?\s+#?\d+", re.I), "an issue number"),
    (re.compile(r"(?<![\w&/#])#\d{1,4}\b(?![0-9a-fA-F])"), "an issue number (#N)"),
    (re.compile(rf"\b(?:{_ORDINALS})\s+(?:work\s+|dev\s+)?sessions?\b", re.I), "a session of ours"),
    (re.compile(r"\bsessions?\s+\d+\b", re.I), "a session of ours"),
    (
        # Not "last session" or "previous session": a session is also the product's run.
        re.compile(r"\b(?:work|development|dev|our)\s+sessions?\b", re.I),
        "a session of ours",
    ),
    (re.compile(r"\bthis session\s*[:;,.)]", re.I), "a session of ours"),
    (re.compile(rf"\b(?:{_ORDINALS})\s+(?:pass|cut)\b", re.I), "a pass of development"),
    (re.compile(r"\bnot built yet\b", re.I), "a to-do list, not a limit"),
    (re.compile(r"\bleftovers?\b", re.I), "a to-do list, not a limit"),
]
_OUTSIDE = [
    (re.compile(r"(?<![\w.])\.\./"), "a path outside the repository (../)"),
    (re.compile(r"/work/"), "a path outside the repository (/work/)"),
    (re.compile(r"\bshared/(?:DESIGN|seeds)"), "a document outside the repository"),
    (re.compile(r"\bseeds? \d{3}\b", re.I), "a document outside the repository"),
]


# "livekit/agents issue 1472": another project's issue, cited; not one of ours.
_UPSTREAM = re.compile(r"[\w.-]+/[\w.-]+\s+$")


def line_diary_words(line: str) -> list[str]:
    """What in one line tells our history or points outside the repository."""
    return [
        f"{what}: {match.group(0)!r}"
        for pattern, what in _DIARY + _OUTSIDE
        for match in pattern.finditer(line)
        if not _UPSTREAM.search(line[: match.start()])
    ]


def diary_words(path: Path) -> list[str]:
    return [
        f"{_rel(path)}:{number}: {word}"
        for number, line, _fenced in _lines(path)
        for word in line_diary_words(line)
    ]


@pytest.mark.parametrize("doc", _all_doc_paths(), ids=_rel)
def test_docs_tell_no_history_and_stay_inside(doc: Path) -> None:
    assert diary_words(doc) == []


def test_the_history_check_catches_what_it_should(tmp_path: Path) -> None:
    sample = tmp_path / "sample.md"
    sample.write_text(
        "Status of issue 13: done.\n"
        "Fixed in #17, then the sixth session cut it again (second cut).\n"
        "See `../shared/DESIGN.md` and /work/shared/x.\n"
        "A session ends with `session_ended`; colour #ff0000 and #000000 stay.\n"
        "Failover this session: 2 s.\n"
        "As seed 004 prints it.\n"
    )
    found = [line.split(": ", 1)[1] for line in diary_words(sample)]
    assert found == [
        "an issue number: 'issue 13'",
        "an issue number (#N): '#17'",
        "a session of ours: 'sixth session'",
        "a pass of development: 'second cut'",
        "a path outside the repository (../): '../'",
        "a path outside the repository (/work/): '/work/'",
        "a document outside the repository: 'shared/DESIGN'",
        "a session of ours: 'this session:'",
        "a document outside the repository: 'seed 004'",
    ]


def _docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every docstring in a module: the module's, its classes' and functions'."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                yield (node.body[0].lineno, doc)


def _help_texts() -> Iterator[tuple[str, str]]:
    """(command, help) of `steward` and every subcommand, as `--help` prints it."""
    roots, seen = _parsers()
    todo = [(f"steward {name}".strip(), parser) for name, parser in roots.items()]
    done: set[int] = set()
    while todo:
        name, parser = todo.pop()
        if id(parser) in done:
            continue
        done.add(id(parser))
        yield name, parser.format_help()
        for sub, child in seen.get(id(parser), _Parser()).commands.items():
            todo.append((f"{name} {sub}", child))


def code_diary_words() -> list[str]:
    found = []
    for root in ("steward", "steward_tools"):
        for path in sorted((ROOT / root).rglob("*.py")):
            for start, doc in _docstrings(path):
                for offset, line in enumerate(doc.splitlines()):
                    found += [f"{_rel(path)}:{start + offset}: {w}" for w in line_diary_words(line)]
    for command, text in _help_texts():
        found += [
            f"`{command} --help`: {w}" for line in text.splitlines() for w in line_diary_words(line)
        ]
    return found


def test_docstrings_and_help_texts_tell_no_history() -> None:
    assert code_diary_words() == []


def test_the_code_history_check_reads_docstrings_and_help(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Targets (issue 7): fast.\n\nAs livekit/agents issue 1472 says."""\n\n\n'
        'def f() -> None:\n    """Fixed in #17."""\n'
    )
    words = [w for start, doc in _docstrings(sample) for w in line_diary_words(doc)]
    assert words == ["an issue number: 'issue 7'", "an issue number (#N): '#17'"]
    helps = dict(_help_texts())
    assert "steward" in helps and "steward bench abuse" in helps


# ---------------------------------------------------------------- the README's length

# What it is, the two commands, the first-run table, what works, configuration, production and
# the known limits: more than this and the detail belongs in docs/*.md.
README_MAX_LINES = 250


def test_the_readme_stays_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, more than {README_MAX_LINES}: say it in fewer words "
        "or move the detail to docs/*.md"
    )


# ---------------------------------------------------------------- the repository's files


@cache
def _repo_files() -> tuple[frozenset[str], frozenset[str]]:
    """Every file and folder of the repository, as paths relative to its root."""
    files: set[str] = set()
    folders: set[str] = set()

    def walk(folder: Path) -> None:
        for child in folder.iterdir():
            if child.is_dir():
                if child.name not in SKIP_DIRS:
                    folders.add(_rel(child))
                    walk(child)
            else:
                files.add(_rel(child))

    walk(ROOT)
    return frozenset(files), frozenset(folders)


_PATH_EXT = r"py|ts|tsx|mjs|js|md|ya?ml|json|jsonl|sql|sh|jsgf|toml|html|css|png|lock|cfg"
_PATH = re.compile(rf"^[\w.@-]+(?:/[\w.@-]+)*(?:\.(?:{_PATH_EXT})|/)$|^[\w.@-]+(?:/[\w.@-]+)+$")
# Where a short path (`room/runtime.py`, `bench/`) may live.
_PATH_HOMES = ("", "steward/", "steward_tools/", "client-bridge/", "client-bridge/src/", "tests/")
_TOP = {"steward", "steward_tools", "client-bridge", "tests", "docs", "ops", "migrations", ".ci"}
# Paths that exist only while the product runs (data, tools it downloads, files it writes).
_RUNTIME_PATHS = {".data", ".tools", ".env", "node_modules", "dist"}


def _looks_like_path(span: str) -> bool:
    span = span.removeprefix("./")
    if " " in span or "://" in span or span.startswith(("/", "~", "$")) or not _PATH.match(span):
        return False
    first = span.split("/", 1)[0]
    if first in _RUNTIME_PATHS or first.startswith(".data"):
        return False
    if "/" not in span.rstrip("/"):
        # A bare file name is a module of ours (`guard.py`); logs, transcripts and images
        # that a command writes as it runs (`steward.log`) are not in the repository.
        return re.search(r"\.(?:py|ts|tsx|mjs|sh|sql)$", span) is not None
    # A name with a slash but no extension (`tldraw-actions/1`) is a path only under a
    # folder of ours.
    has_ext = re.search(rf"\.(?:{_PATH_EXT})$", span) is not None
    return has_ext or span.endswith("/") or first in _TOP or _is_folder_suffix(first)


@cache
def _is_folder_suffix(name: str) -> bool:
    _files, folders = _repo_files()
    return any(f == name or f.endswith("/" + name) for f in folders)


def path_exists(span: str) -> bool:
    files, folders = _repo_files()
    name = span.removeprefix("./").rstrip("/")
    if "/" not in name:  # a bare file name: some file of the repository has it
        return any(f == name or f.endswith("/" + name) for f in files | folders)
    return any(home + name in files or home + name in folders for home in _PATH_HOMES)


_MODULE_MEMBER = re.compile(r"^([\w/]+)\.([A-Za-z_]\w*)$")


def module_member_exists(span: str) -> bool:
    """`actions/registry.process`: a module of ours, written as a path, and a name in it."""
    match = _MODULE_MEMBER.match(span)
    if match is None:
        return False
    module_path, attr = match.groups()
    files, _folders = _repo_files()
    for home in ("", "steward/", "steward_tools/"):
        candidate = home + module_path
        if candidate + ".py" in files and candidate.startswith(("steward/", "steward_tools/")):
            return hasattr(importlib.import_module(candidate.replace("/", ".")), attr)
    return False


def missing_paths(path: Path) -> list[str]:
    return [
        f"{_rel(path)}:{number}: `{span}` names a file or folder that does not exist "
        "(renamed or moved? name it as it is now)"
        for number, span in _spans(path)
        if _looks_like_path(span) and not path_exists(span) and not module_member_exists(span)
    ]


# ---------------------------------------------------------------- Python names

_DOTTED = re.compile(r"^(steward(?:_tools)?(?:\.\w+)+)(?:\(.*\))?$")
_FILE_NAME = re.compile(rf"\.(?:{_PATH_EXT}|log)$")
_MEMBER = re.compile(r"^([A-Z]\w*[a-z]\w*)\.(\w+)(?:\(.*\))?$")


def dotted_name_exists(name: str) -> bool:
    """`steward.x.y.z`: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@cache
def _wire_names() -> frozenset[str]:
    """String constants of steward/ (RPC methods, attributes: `steward.prompt`,
    `steward.can_prompt`), which the docs name as the wire spells them."""
    names: set[str] = set()
    for source in (ROOT / "steward").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)
    return frozenset(names)


@cache
def _ts_classes() -> dict[str, str]:
    """Classes of the browser side (client-bridge/src), each with its file's text."""
    classes: dict[str, str] = {}
    for source in (ROOT / "client-bridge" / "src").rglob("*.ts"):
        text = source.read_text(encoding="utf-8")
        for name in re.findall(r"\bclass\s+(\w+)", text):
            classes[name] = text
    return classes


@cache
def _classes() -> dict[str, tuple[str, set[str]]]:
    """Every class of steward/ and steward_tools/ with the names it defines or assigns
    (methods, class attributes, fields, `self.x` in its methods)."""
    classes: dict[str, tuple[str, set[str]]] = {}
    for package in ("steward", "steward_tools"):
        for source in (ROOT / package).rglob("*.py"):
            tree = ast.parse(source.read_text(encoding="utf-8"))
            module = ".".join(source.relative_to(ROOT).with_suffix("").parts)
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef):
                    continue
                names = classes.setdefault(node.name, (module, set()))[1]
                for inner in ast.walk(node):
                    if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                        names.add(inner.name)
                    elif isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                        names.add(inner.target.id)
                    elif isinstance(inner, ast.Assign):
                        names |= {t.id for t in inner.targets if isinstance(t, ast.Name)}
                    if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
                        if inner.value.id == "self" and isinstance(inner.ctx, ast.Store):
                            names.add(inner.attr)
                    if isinstance(inner, ast.Assign | ast.AnnAssign):
                        targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
                        for t in targets:
                            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                                if t.value.id == "self":
                                    names.add(t.attr)
    return classes


def class_has(cls: str, attr: str) -> bool:
    """What the class's source assigns, or what the class object has (inherited names)."""
    module, names = _classes()[cls]
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", attr).lower()  # a camelCase wire alias
    if attr in names or snake in names:
        return True
    return hasattr(getattr(importlib.import_module(module), cls, None), attr)


def member_exists(cls: str, attr: str) -> bool | None:
    """`Class.attr`: True or False where the class is known, None where it is not."""
    if cls in _EXTERNAL_CLASSES:
        module = importlib.import_module(_EXTERNAL_CLASSES[cls])
        return hasattr(getattr(module, cls), attr)
    if cls in _classes():
        return class_has(cls, attr)
    if cls in _ts_classes():
        return re.search(rf"\b{re.escape(attr)}\b", _ts_classes()[cls]) is not None
    return None


def missing_python_names(path: Path) -> list[str]:
    found = []
    for number, span in _spans(path):
        dotted = _DOTTED.match(span)
        if (
            dotted
            and not _FILE_NAME.search(span)
            and not dotted_name_exists(dotted.group(1))
            and dotted.group(1) not in _wire_names()
        ):
            found.append(
                f"{_rel(path)}:{number}: `{span}`: no such module or attribute "
                "(renamed or moved? name it as it is now)"
            )
        member = _MEMBER.match(span)
        if member and not (dotted or _FILE_NAME.search(span)):
            cls, attr = member.groups()
            exists = member_exists(cls, attr)
            if exists is None:
                found.append(
                    f"{_rel(path)}:{number}: `{span}`: no class {cls} in steward/, "
                    "steward_tools/ or client-bridge/src (renamed or moved?)"
                )
            elif not exists:
                found.append(f"{_rel(path)}:{number}: `{span}`: {cls} has no {attr}")
    return found


# Classes of other projects the docs name, and the module each is checked in.
_EXTERNAL_CLASSES = {
    "JobContext": "livekit.agents",
    "DataStreamOptions": "livekit.rtc",
    "AudioSource": "livekit.rtc",
}


# ---------------------------------------------------------------- bare names

_CAMEL = re.compile(r"^([A-Z][a-z0-9]+[A-Z]\w*)(?:\(\))?$")
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
# Where the code the docs name lives: the runtime, its tooling and the browser side.
_PRODUCT = (
    "steward",
    "steward_tools",
    "client-bridge/src",
    "client-bridge/e2e",
    "client-bridge/bench",
)
_SOURCE_SUFFIXES = (".py", ".ts", ".tsx", ".mjs")
# Names of other projects the docs name bare, and whose they are.
_EXTERNAL_NAMES = {"CompressionStream": "the browsers' Compression Streams API"}


@cache
def _product_text() -> str:
    return "\n".join(
        source.read_text(encoding="utf-8")
        for folder in _PRODUCT
        for source in sorted((ROOT / folder).rglob("*"))
        if source.suffix in _SOURCE_SUFFIXES and not SKIP_DIRS & set(source.parts)
    )


@cache
def _defined_names() -> frozenset[str]:
    """Classes, functions, types and top-level constants of the product's sources."""
    text = _product_text()
    names = re.findall(r"\b(?:class|def|interface|type|function|const|let|enum)\s+(\w+)", text)
    names += re.findall(r"^(\w+)\s*[:=]", text, re.M)
    return frozenset(names)


def missing_names(path: Path) -> list[str]:
    """Bare `CamelCase` names must be defined in the product, `CONSTANT_NAMES` used in it."""
    found = []
    for number, span in _spans(path):
        camel = _CAMEL.match(span)
        known = _defined_names() | _EXTERNAL_NAMES.keys() | set(dir(builtins))
        if camel and camel.group(1) not in known:
            found.append(
                f"{_rel(path)}:{number}: `{span}` is defined nowhere in "
                f"{', '.join(_PRODUCT)} (renamed? name it as it is now)"
            )
        if (
            _CONSTANT.match(span)
            and not setting_exists(span)
            and re.search(rf"\b{span}\b", _product_text()) is None
        ):
            found.append(f"{_rel(path)}:{number}: `{span}` appears nowhere in the code")
    return found


# ---------------------------------------------------------------- the command line

_COMMAND = re.compile(r"^(?:uv run (?:--frozen )?)?steward\s+([a-z].*)$")


@dataclass
class _Parser:
    """What a test needs of one argparse parser (argparse keeps both private)."""

    commands: dict[str, argparse.ArgumentParser] = field(default_factory=dict)
    options: set[str] = field(default_factory=set)


@cache
def _parsers() -> tuple[dict[str, argparse.ArgumentParser], dict[int, _Parser]]:
    """The CLI's own parsers: `steward`, and the tooling's behind `steward bench` and
    `steward by-hand` (those two hand every argument on unread), built while argparse
    reports every subcommand and option it is given."""
    from steward.cli import build_parser
    from steward_tools.bench.command import build_parser as bench_parser
    from steward_tools.by_hand.command import build_parser as by_hand_parser

    seen: dict[int, _Parser] = {}
    add_subparsers = argparse.ArgumentParser.add_subparsers
    add_argument = argparse.ArgumentParser.add_argument

    def subparsers(self: argparse.ArgumentParser, **kwargs: Any) -> Any:
        action = add_subparsers(self, **kwargs)
        seen.setdefault(id(self), _Parser()).commands = action.choices
        return action

    def argument(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        action = add_argument(self, *args, **kwargs)
        seen.setdefault(id(self), _Parser()).options |= set(action.option_strings)
        return action

    with (
        mock.patch.object(argparse.ArgumentParser, "add_subparsers", subparsers),
        mock.patch.object(argparse.ArgumentParser, "add_argument", argument),
    ):
        roots = {"": build_parser(), "bench": bench_parser(), "by-hand": by_hand_parser()}
    return roots, seen


def command_problem(words: list[str]) -> str | None:
    """None when `steward <words>` names commands and options the CLI has."""
    parsers, seen = _parsers()
    parser = parsers[""]
    trail = ["steward"]
    for word in words:
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            if option not in seen[id(parser)].options:
                return f"`{' '.join(trail)}` has no option {option}"
            continue
        commands = seen[id(parser)].commands
        if not commands:
            continue  # an argument (ROOM, a file, a number)
        if not re.fullmatch(r"[a-z][a-z_-]*(\|[a-z][a-z_-]*)*", word):
            break  # a placeholder for a subcommand (`steward bench NAME`): nothing to check
        for alternative in word.split("|"):
            if alternative not in commands:
                return f"`{' '.join(trail)}` has no subcommand {alternative}"
        chosen = word.split("|")[0]
        tool = parsers.get(chosen) if parser is parsers[""] else None
        parser = tool or commands[chosen]
        trail.append(chosen)
        if "|" in word:
            break
    return None


def missing_commands(path: Path) -> list[str]:
    found = []
    for number, span in _spans(path):
        match = _COMMAND.match(span)
        if not match:
            continue
        words = [w.strip("[]") for w in match.group(1).split()]
        problem = command_problem([w for w in words if w and w not in ("…", "...")])
        if problem:
            found.append(f"{_rel(path)}:{number}: `{span}`: {problem}")
    return found


# ---------------------------------------------------------------- settings

_SETTING = re.compile(r"(?<![\w$])STEWARD_[A-Z0-9_]*[A-Z0-9]\b")


@cache
def _env_read_elsewhere() -> frozenset[str]:
    """STEWARD_* variables read outside `Settings` (as string literals in the code)."""
    names: set[str] = set()
    for package in ("steward", "steward_tools", "tests", "ops", "client-bridge/src"):
        for source in (ROOT / package).rglob("*"):
            if source.suffix in (".py", ".sh", ".ts", ".mjs") and source.name != "test_docs.py":
                names |= set(_SETTING.findall(source.read_text(encoding="utf-8")))
    names |= set(_SETTING.findall((ROOT / "Makefile").read_text(encoding="utf-8")))
    return frozenset(names)


def setting_exists(name: str) -> bool:
    return name.lower() in Settings.model_fields or name in _env_read_elsewhere()


def missing_settings(path: Path) -> list[str]:
    return [
        f"{_rel(path)}:{number}: {name} is not a setting (not a field of Settings, not read "
        "anywhere in the code)"
        for number, line, _fenced in _lines(path)
        for name in _SETTING.findall(line)
        if not setting_exists(name)
    ]


# ---------------------------------------------------------------- sections named elsewhere

# `docs/DEPLOY.md, "The wedged worker"` or `WIRE-VERBS.md ("the composing hint")`.
_SECTION_REF = re.compile(r'\b([A-Z][A-Z-]+)\.md`?,? \(?"([^"]+)"')


def _section_refs() -> Iterator[tuple[str, str, str]]:
    """(where, doc name, title) for every reference to a doc's section, in the docs and in
    the code's comments."""
    sources = [*_all_doc_paths()]
    for folder in ("steward", "steward_tools", "tests", "client-bridge/src"):
        sources += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".ts")]
    for source in sources:
        if source.name == Path(__file__).name:
            continue
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            for match in _SECTION_REF.finditer(line):
                yield f"{_rel(source)}:{number}", match.group(1), match.group(2)


def missing_sections(refs: Iterable[tuple[str, str, str]] | None = None) -> list[str]:
    found = []
    for where, doc, title in _section_refs() if refs is None else refs:
        path = ROOT / f"{doc}.md" if doc == "README" else ROOT / "docs" / f"{doc}.md"
        headings = [
            line.lstrip("#").strip().lower()
            for line in (path.read_text(encoding="utf-8") if path.exists() else "").splitlines()
            if line.startswith("#")
        ]
        if not any(title.lower() in heading for heading in headings):
            found.append(f'{where}: {doc}.md has no section "{title}"')
    return found


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("doc", _doc_paths(), ids=_rel)
def test_every_file_the_docs_name_exists(doc: Path) -> None:
    assert missing_paths(doc) == []


@pytest.mark.parametrize("doc", _doc_paths(), ids=_rel)
def test_every_python_name_the_docs_name_exists(doc: Path) -> None:
    assert missing_python_names(doc) == []


@pytest.mark.parametrize("doc", _doc_paths(), ids=_rel)
def test_every_bare_class_and_constant_the_docs_name_exists(doc: Path) -> None:
    assert missing_names(doc) == []


@pytest.mark.parametrize("doc", _doc_paths(), ids=_rel)
def test_every_command_the_docs_name_exists(doc: Path) -> None:
    assert missing_commands(doc) == []


@pytest.mark.parametrize("doc", _doc_paths(), ids=_rel)
def test_every_setting_the_docs_name_exists(doc: Path) -> None:
    assert missing_settings(doc) == []


def test_the_code_name_checks_catch_what_they_should(tmp_path: Path) -> None:
    sample = tmp_path / "docs" / "sample.md"
    sample.parent.mkdir()
    sample.write_text(
        "`steward/room/outbound/broadcaster.py`, `room/outbound/broadcaster.py` and `steward/room/`"
        " exist;\n"
        "`steward/room/no_such_module.py` and `fairies/gone/` do not.\n"
        "`steward.config.Settings` exists, `steward.config.NoSuch` does not.\n"
        "`Settings.model_fields` exists, `Settings.no_such` does not.\n"
        "`steward bench faults --json` and `steward db migrate` exist;\n"
        "`steward bench nosuch` and `steward rooms --nosuch` do not.\n"
        "STEWARD_MODEL exists; STEWARD_NO_SUCH_SETTING does not.\n"
        "`TurnDriver` and `MAX_BATCH_BYTES` exist; `NoSuchDriver` and `NO_SUCH_LIMIT` do not.\n"
    )
    problems = (
        missing_paths(sample)
        + missing_python_names(sample)
        + missing_commands(sample)
        + missing_settings(sample)
        + missing_names(sample)
    )
    expected = [
        "`steward/room/no_such_module.py`",
        "`fairies/gone/`",
        "`steward.config.NoSuch`",
        "`Settings.no_such`",
        "`steward bench nosuch`",
        "`steward rooms --nosuch`",
        "STEWARD_NO_SUCH_SETTING",
        "`NoSuchDriver`",
        "`NO_SUCH_LIMIT`",
    ]
    assert len(problems) == len(expected), problems
    assert all(name in problem for name, problem in zip(expected, problems, strict=True))


def test_every_section_named_in_the_docs_or_the_code_exists() -> None:
    assert missing_sections() == []


def test_the_section_check_catches_a_missing_section() -> None:
    refs = [("a.py:1", "DEPLOY", "the wedged worker"), ("a.py:2", "DEPLOY", "Re-dispatch figures")]
    assert missing_sections(refs) == ['a.py:2: DEPLOY.md has no section "Re-dispatch figures"']
