"""README's and docs/FIRST-RUN.md's tables are the first-run corpus: same sentences, same
outcomes, in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.first_run import CASES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("doc", [ROOT / "README.md", ROOT / "docs" / "FIRST-RUN.md"])
def test_the_table_lists_every_case(doc: Path) -> None:
    lines = doc.read_text().splitlines()
    start = lines.index("| you type | canvas before | what happens |")
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        for line in table
        if line.startswith("| `")
    ]
    assert [(r[0].strip("`"), r[2]) for r in rows] == [(c.sentence, c.does) for c in CASES]
    assert len(rows) >= 30
