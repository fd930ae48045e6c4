"""History filtering by memory level, as a table, plus the transition summaries."""

from __future__ import annotations

import pytest

from steward.fairies.memory import (
    HistoryItem,
    MemoryLevel,
    filter_history,
    history_tokens,
    project_end_items,
    prompt_item,
    task_end_items,
)


def _h(spec: str) -> list[HistoryItem]:
    """'F1 P2 T3' → items with level F/P/T and text '1', '2', '3'."""
    levels: dict[str, MemoryLevel] = {"F": "fairy", "P": "project", "T": "task"}
    return [prompt_item(tok[1:], levels[tok[0]], "user") for tok in spec.split()]


def _texts(items: list[HistoryItem]) -> str:
    return " ".join(i.text for i in items)


CASES = [
    # history,                      fairy,        project,      task
    ("", "", "", ""),
    ("F1 F2", "1 2", "", ""),
    ("F1 P2 P3", "1", "2 3", ""),
    ("F1 P2 T3 T4 P5", "1", "2 5", ""),
    ("F1 P2 T3 T4", "1", "2", "3 4"),
    ("P1 F2 P3 T4 P5 T6 T7", "2", "3 5", "6 7"),
    ("T1 T2", "", "", "1 2"),
    ("F1 T2 F3 T4", "1 3", "", "4"),
    ("P1 P2 T3 F4", "4", "", ""),
    ("T1 P2 T3", "", "2", "3"),
    ("F1 P2 T3 P4 F5 P6", "1 5", "6", ""),
]


@pytest.mark.parametrize(("history", "fairy", "project", "task"), CASES)
def test_filter_table(history: str, fairy: str, project: str, task: str) -> None:
    items = _h(history) if history else []
    assert _texts(filter_history(items, "fairy")) == fairy
    assert _texts(filter_history(items, "project")) == project
    assert _texts(filter_history(items, "task")) == task


def test_task_end_hides_task_detail_from_fairy_level() -> None:
    items = _h("F1") + [prompt_item(f"draw {i}", "task", "self") for i in range(20)]
    items += task_end_items("t1", "Sun", "draw a sun")
    seen = filter_history(items, "fairy")
    assert [i.kind for i in seen] == ["prompt", "memory-transition", "prompt"]
    assert "filtered for brevity" in seen[1].text
    assert '"t1"' in seen[2].text
    assert filter_history(items, "task") == []


def test_project_end_summary_and_token_saving() -> None:
    items = _h("F1 P2 P3") + _h(" ".join(f"T{'x' * 200}" for _ in range(30)))
    items += project_end_items("Farm", ["d1", "d2"], led=True)
    fairy_view = filter_history(items, "fairy")
    assert "2 other fairy(s): d1, d2" in fairy_view[-1].text
    assert history_tokens(fairy_view) * 5 < history_tokens(items)
