"""The by-hand model's files: folder labels and numbers, the prefill dropped from a whole
answer, atomic answers, what is still waiting (the HTTP side is in
tests/integration/test_model_by_hand.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from steward.model.base import PREFILL
from steward_tools.by_hand import parking

BODY = {
    "model": "drone",
    "system": [{"type": "text", "text": "sys"}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "draw"}]},
        {"role": "assistant", "content": PREFILL},
    ],
}


def test_the_label_is_the_model_name_in_safe_characters() -> None:
    assert parking.label_for({"model": "anthropic:by hand/../x"}) == "anthropic-by-hand-..-x"
    assert parking.label_for({}) == "model"


def test_a_whole_answer_loses_its_copy_of_the_prefill_and_a_continuation_is_kept() -> None:
    rest = '{"_type": "message", "text": "hi"}]}'
    assert parking.continuation(BODY, "\n" + PREFILL + rest) == rest
    assert parking.continuation(BODY, rest) == rest
    no_prefill = BODY | {"messages": BODY["messages"][:1]}
    assert parking.continuation(no_prefill, PREFILL + rest) == PREFILL + rest


def test_park_numbers_folders_and_pending_lists_only_the_waiting(tmp_path: Path) -> None:
    first = parking.park(tmp_path, 1, BODY).folder
    second = parking.park(tmp_path, parking.next_number(tmp_path), BODY).folder
    assert [first.name, second.name] == ["001-drone", "002-drone"]
    assert (first / "system.txt").read_text() == "sys"
    assert parking.pending(tmp_path) == [first, second]
    assert parking.write_answer(first, "x") == first / parking.ANSWER
    assert not (first / (parking.ANSWER + ".tmp")).exists()
    parking.set_status(first, "answered")
    assert parking.pending(tmp_path) == [second]


def test_a_body_without_messages_or_with_a_broken_image_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no messages"):
        parking.park(tmp_path, 1, {"model": "m", "messages": []})
    image = {"type": "image", "source": {"media_type": "image/png", "data": "bm90IGFuIGltYWdl"}}
    bad = {"model": "m", "messages": [{"role": "user", "content": [image]}]}
    with pytest.raises(ValueError, match=r"image-1\.png cannot be decoded"):
        parking.park(tmp_path, 2, bad)
    status = (tmp_path / "002-m" / parking.STATUS).read_text()
    assert status.startswith("refused: image image-1.png cannot be decoded")
    assert parking.pending(tmp_path) == []
