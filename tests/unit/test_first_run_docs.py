"""docs/FIRST-RUN.md's table is the first-run corpus: same sentences, same outcomes, in order."""

from __future__ import annotations

from pathlib import Path

from tests.first_run import CASES

DOC = Path(__file__).resolve().parents[2] / "docs" / "FIRST-RUN.md"


def test_the_docs_table_lists_every_case() -> None:
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        for line in DOC.read_text().splitlines()
        if line.startswith("| `")
    ]
    assert [(r[0].strip("`"), r[2]) for r in rows] == [(c.sentence, c.does) for c in CASES]
    assert len(rows) >= 30
