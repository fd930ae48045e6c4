"""The incremental action parser: chunking never changes the result; messy output is handled."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steward.model.base import PREFILL
from steward.model.parser import ActionStreamParser, parse_all
from steward.model.scripted import ScriptedModel

RESPONSE = PREFILL + ScriptedModel().response_text({"message": "draw a flow chart of our signup"})
TRICKY = (
    'Sure, here you go {not json}:\n```json\n{"actions": [{"_type": "message", "text": '
    '"say \\"hi\\" \\u00e9\\ud83d\\ude00 \\\\ back\\nslash"}, {"_type": "create", "shape": '
    '{"_type": "rectangle", "shapeId": "a", "x": -1.5e2, "y": 3, "w": NaN, "tags": [true, '
    "null, [1, {}]]}}]}\n```\nDone."
)


def run_chunks(text: str, cuts: list[int]) -> list[dict[str, Any]]:
    parser = ActionStreamParser()
    out: list[dict[str, Any]] = []
    bounds = [0, *sorted(set(cuts)), len(text)]
    for a, b in itertools.pairwise(bounds):
        out += [e.data for e in parser.feed(text[a:b]) if e.complete]
    out += [e.data for e in parser.finish() if e.complete]
    return out


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_chunking_gives_the_same_actions(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from([RESPONSE, TRICKY]))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=60))
    whole = parse_all(text)
    got = run_chunks(text, cuts)
    assert json.dumps(got, sort_keys=True) == json.dumps(whole, sort_keys=True)


def test_whole_response_parses_like_json() -> None:
    assert parse_all(RESPONSE) == json.loads(RESPONSE)["actions"]


def test_tricky_output() -> None:
    first, second = parse_all(TRICKY)
    assert first["text"] == 'say "hi" é😀 \\ back\nslash'
    assert second["shape"]["x"] == -150.0 and second["shape"]["tags"] == [True, None, [1, {}]]
    assert second["shape"]["w"] != second["shape"]["w"]  # NaN survives to the sanitizer


def test_partials_then_complete_with_stable_index() -> None:
    parser = ActionStreamParser()
    events = []
    for ch in RESPONSE:
        events += parser.feed(ch)
    by_index: dict[int, list[bool]] = {}
    for e in events:
        by_index.setdefault(e.index, []).append(e.complete)
    for flags in by_index.values():
        assert flags[-1] is True and flags.count(True) == 1
    assert any(len(f) > 2 for f in by_index.values())  # some actions streamed partially


def test_partial_string_path_is_reported() -> None:
    parser = ActionStreamParser()
    events = parser.feed('{"actions": [{"_type": "create", "shape": {"_type": "rect')
    partial = [e for e in events if not e.complete][-1]
    assert partial.incomplete_path == ("shape", "_type")
    assert partial.data["shape"]["_type"] == "rect"


def test_cut_off_output_reports_truncated_action() -> None:
    parser = ActionStreamParser()
    events = parser.feed('{"actions": [{"_type": "think", "text": "a"}, {"_type": "message", "te')
    events += parser.finish()
    assert [e.data["_type"] for e in events if e.complete] == ["think"]
    assert events[-1].truncated and events[-1].index == 1


def test_bare_array_and_prefill() -> None:
    assert parse_all('[{"_type": "think", "text": "x"}]') == [{"_type": "think", "text": "x"}]
    parser = ActionStreamParser()
    parser.feed(PREFILL)
    events = parser.feed('{"_type": "clear"}]}')
    assert [e.data for e in events if e.complete] == [{"_type": "clear"}]


def test_unicode_escape_split_across_chunks() -> None:
    text = '{"actions": [{"_type": "message", "text": "\\u00e9\\ud83d\\ude00"}]}'
    for cut in range(len(text)):
        assert run_chunks(text, [cut]) == [{"_type": "message", "text": "é😀"}]


def test_work_is_linear_in_snapshot_size() -> None:
    # One huge message streamed a character at a time: snapshots grow geometrically.
    body = "x" * 20_000
    parser = ActionStreamParser()
    parser.feed('{"actions": [{"_type": "message", "text": "')
    copied = 0
    for ch in body:
        for e in parser.feed(ch):
            copied += len(e.data.get("text", ""))
    assert copied < 12 * len(body)


BODY = '{"_type": "think", "text": "plan"}, {"_type": "message", "text": "done"}]}'
EXPECTED = [{"_type": "think", "text": "plan"}, {"_type": "message", "text": "done"}]
AFTER_PREFILL_FORMS = {
    "plain": BODY,
    "prose and a fence": f'Sure! Here is the plan:\n```json\n{{"actions": [{BODY}\n```\nAll set.',
    "a bare fence": f'```json\n{{"actions": [{BODY}\n```',
    "inline code on one line": f'Here: `{{"actions": [{BODY}`',
    "the opening repeated": f'{{"actions": [{BODY}',
    "the opening repeated, spaced": f'\n  {{ "actions" : [\n{BODY}',
    "prose, then a bare array": f"Here: [{BODY[:-1]}",
    "an object before the answer": f'Thinking {{"plan": 1}} now {{"actions": [{BODY}',
    "a comma forgotten": BODY.replace("}, {", "}\n{"),
    "a first action with spaces": '{ "_type" : "think", "text": "plan"}, '
    '{"_type": "message", "text": "done"}]}',
}


@pytest.mark.parametrize("form", list(AFTER_PREFILL_FORMS))
def test_response_forms_after_the_prefill_yield_the_actions(form: str) -> None:
    text = AFTER_PREFILL_FORMS[form]
    for cuts in ([], list(range(len(text)))):  # one chunk, then a character at a time
        parser = ActionStreamParser()
        parser.feed(PREFILL)
        events = []
        for a, b in itertools.pairwise([0, *cuts, len(text)]):
            events += parser.feed(text[a:b])
        events += parser.finish()
        assert [e.data for e in events if e.complete] == EXPECTED, (form, len(cuts))


def test_prose_with_no_json_yields_nothing() -> None:
    parser = ActionStreamParser()
    parser.feed(PREFILL)
    assert parser.feed("I cannot draw that, sorry.") + parser.finish() == []


def test_split_surrogate_pair_never_shows_a_replacement_character() -> None:
    head = '{"_type": "message", "text": "a long enough text \\ud83d'
    for cut in range(len(head) - 6, len(head) + 1):  # inside and after the first escape
        parser = ActionStreamParser()
        parser.feed(PREFILL)
        events = parser.feed(head[:cut]) + parser.feed(head[cut:])
        events += parser.feed('\\ude00 and more"}]}')
        texts = [e.data["text"] for e in events if "text" in e.data]
        assert texts and all("\ufffd" not in t for t in texts)
        assert texts[-1] == "a long enough text 😀 and more"
