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


# -- entries that are not actions, and empty arrays in prose ------------------------------

ACTION = {"_type": "create", "shape": {"_type": "rectangle", "shapeId": "a", "x": 1, "y": 2}}
THINK = {"_type": "think", "text": 'then a label, [with] brackets, "quotes" and {braces}'}


def parse_with_notes(text: str, chunk: int = 0) -> tuple[list[dict[str, Any]], list[str]]:
    parser = ActionStreamParser()
    events = []
    step = chunk or len(text) or 1
    for i in range(0, len(text), step):
        events += parser.feed(text[i : i + step])
    events += parser.finish()
    return [e.data for e in events if e.complete], parser.take_notes()


@pytest.mark.parametrize(
    ("entry", "kind"),
    [
        ('"oops"', "a string"),
        ("3", "a number"),
        ("-2.5e1", "a number"),
        ("null", "null"),
        ("true", "true or false"),
        ("[]", "an array"),
        ('[1, {"a": "]"}]', "an array"),
        ('"a \\" ] , quote"', "a string"),
    ],
)
@pytest.mark.parametrize("chunk", [0, 1, 3])
def test_a_first_entry_that_is_no_object_is_skipped_with_a_note(
    entry: str, kind: str, chunk: int
) -> None:
    text = f"{PREFILL}{entry}, {json.dumps(ACTION)},{entry},{json.dumps(THINK)}]}}"
    actions, notes = parse_with_notes(text, chunk)
    assert actions == [ACTION, THINK]
    assert notes == [
        f"entry {i} of the actions array is {kind}, not an action object; it was skipped"
        for i in (0, 2)
    ]


@pytest.mark.parametrize(
    "text",
    [
        f'{PREFILL}Sure! I will draw it. {{"actions": [{json.dumps(ACTION)}]}}',
        f'{PREFILL}3 boxes coming up: {{"actions": [{json.dumps(ACTION)}]}}',
        f'{PREFILL}null of these exist yet. {{"actions": [{json.dumps(ACTION)}]}}',
        f'{PREFILL}"Boxes" they said. {{"actions": [{json.dumps(ACTION)}]}}',
        f'{PREFILL}\n```json\n{{"actions": [{json.dumps(ACTION)}]}}\n```',
    ],
)
def test_prose_after_the_prefill_still_restarts(text: str) -> None:
    for chunk in (0, 1, 4):
        actions, notes = parse_with_notes(text, chunk)
        assert actions == [ACTION] and notes == []


@pytest.mark.parametrize(
    "text",
    [
        f'Nothing here [] yet; the answer: {{"actions": [{json.dumps(ACTION)}]}}',
        'A list [1, 2] and {"actions": []} as an example, then '
        f'{{"actions": [{json.dumps(ACTION)}]}}',
        f'{PREFILL}I start with [] and then: {{"actions": [{json.dumps(ACTION)}]}}',
        f'[] {{"actions": [{json.dumps(ACTION)}]}}',
    ],
)
def test_an_array_of_no_action_in_prose_does_not_end_the_answer(text: str) -> None:
    for chunk in (0, 1, 5):
        actions, notes = parse_with_notes(text, chunk)
        assert actions == [ACTION] and notes == []


def test_after_a_real_action_later_json_is_still_trailing_noise() -> None:
    text = f'{PREFILL}{json.dumps(ACTION)}]}} and also {{"actions": [{json.dumps(THINK)}]}}'
    assert parse_with_notes(text)[0] == [ACTION]


def test_an_actions_array_of_only_junk_tells_the_model() -> None:
    actions, notes = parse_with_notes(f'{PREFILL}"oops", 4]}}')
    assert actions == [] and len(notes) == 2


_JUNK = st.one_of(
    st.text(max_size=8).map(json.dumps),
    st.integers(-999, 999).map(str),
    st.sampled_from(["null", "true", "false", "[]", "[[]]", '["x", 1]', "[{}]", "-0.5"]),
)
_VALID = st.fixed_dictionaries(
    {
        "_type": st.sampled_from(["create", "message", "think", "move"]),
        "text": st.text(max_size=20),
        "n": st.integers(-5, 5),
    }
)


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(st.one_of(_VALID, _JUNK), max_size=8),
    cuts=st.lists(st.integers(0, 400), max_size=20),
    prefilled=st.booleans(),
)
def test_valid_actions_are_never_lost(
    entries: list[dict[str, Any] | str], cuts: list[int], prefilled: bool
) -> None:
    body = ", ".join(e if isinstance(e, str) else json.dumps(e) for e in entries)
    text = (PREFILL if prefilled else 'Here you go [] {"actions": [') + body + "]}"
    got = run_chunks(text, [c for c in cuts if c <= len(text)])
    assert got == [e for e in entries if isinstance(e, dict)]
    _, notes = parse_with_notes(text)
    assert len(notes) == sum(isinstance(e, str) for e in entries)  # each skipped entry told
