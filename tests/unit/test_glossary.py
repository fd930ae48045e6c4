"""The glossary of docs/ARCHITECTURE.md ("Words") stays in step with the code's names: every
name it says the code uses is defined or used in steward/, and no name it rules out is."""

from __future__ import annotations

import ast
import re
from functools import cache

from steward.config import PROJECT_ROOT

DOC = PROJECT_ROOT / "docs" / "ARCHITECTURE.md"
ROW = re.compile(r"^\|\s*([a-z][a-z ]*)\s*\|[^|]*\|([^|]*)\|([^|]*)\|\s*$")


def rows() -> list[tuple[str, list[str], list[str]]]:
    """(word, names the code uses, names ruled out) per row of the "Words" table."""
    text = DOC.read_text()
    table = text[text.index("## Words") : text.index("## Which way imports run")]
    out = []
    for line in table.splitlines():
        if match := ROW.match(line):
            used = re.findall(r"`(\w+)`", match.group(2))
            banned = re.findall(r"`(\w+)`", match.group(3))
            out.append((match.group(1).strip(), used, banned))
    return out


@cache
def code_names() -> frozenset[str]:
    """Every identifier steward/ defines or uses (names, attributes, arguments)."""
    names: set[str] = set()
    for path in (PROJECT_ROOT / "steward").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return frozenset(names)


def test_the_glossary_has_its_words() -> None:
    assert {"run", "revert", "withdraw", "wire verb", "layout verb"} <= {w for w, _, _ in rows()}


def test_every_name_the_glossary_gives_is_the_codes() -> None:
    missing = [f"{word}: {n}" for word, used, _ in rows() for n in used if n not in code_names()]
    assert missing == []


def test_no_name_the_glossary_rules_out_is_in_the_code() -> None:
    found = [f"{word}: {n}" for word, _, banned in rows() for n in banned if n in code_names()]
    assert found == []
