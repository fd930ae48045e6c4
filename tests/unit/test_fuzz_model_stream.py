"""Hypothesis fuzzing of model streams: the parser, the sanitizer and action registry, and the
whole agent path to the browsers. Never raises; nothing invalid escapes; the steward's mirror
and a browser applying the same envelopes end equal."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steward.actions.base import RunState
from steward.actions.registry import ALL_ACTION_NAMES, process, select
from steward.canvas.mirror import CanvasMirror
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.model.base import PREFILL
from steward.model.parser import MAX_DEPTH, ActionStreamParser, parse_all
from steward.ports import PromptInput
from steward_tools.bench.fuzz import action_seeds
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession
from steward_tools.rigs import mutate
from steward_tools.rigs.fuzz_seeds import SHAPE_SEEDS

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = action_seeds()

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["NaN", "Infinity", "1e999", "shape:x", "", "a" * 12_000])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
PARAM_KEYS = [
    "shapeId",
    "shapeIds",
    "x",
    "y",
    "w",
    "h",
    "text",
    "color",
    "shape",
    "id",
    "status",
    "alignment",
    "direction",
    "gap",
    "points",
    "intent",
    "fromId",
    "toId",
    "update",
    "degrees",
    "scaleX",
    "scaleY",
    "referenceShapeId",
    "_type",
]


@st.composite
def actions(draw: st.DrawFn) -> dict[str, Any]:
    """A known action name (or a wrong one) with wrong-typed, huge or missing params."""
    if draw(st.booleans()):
        base = dict(draw(st.sampled_from(SEEDS)))
        for key in draw(st.lists(st.sampled_from(PARAM_KEYS), max_size=3)):
            base[key] = draw(json_values)
        return base
    name = draw(st.sampled_from([*ALL_ACTION_NAMES, "explode", "create_shape", ""]) | scalars)
    params = draw(st.dictionaries(st.sampled_from(PARAM_KEYS), json_values, max_size=6))
    return {**params, "_type": name}


def stream_text(items: list[Any], rng: random.Random, corrupt: bool) -> str:
    text = ", ".join(json.dumps(a, allow_nan=True) for a in items) + "]}"
    return mutate.mutate_text(rng, text) if corrupt else text


@FUZZ
@given(text=st.text(max_size=300), cuts=st.lists(st.integers(1, 300), max_size=10))
def test_parser_never_raises_on_any_text(text: str, cuts: list[int]) -> None:
    parser = ActionStreamParser()
    events = []
    i = 0
    for n in [*cuts, len(text)]:
        events += parser.feed(text[i : i + n])
        i += n
    events += parser.finish()
    assert all(isinstance(e.data, dict) for e in events)


@FUZZ
@given(items=st.lists(actions(), max_size=6), seed=st.integers(0, 2**32))
def test_parser_result_does_not_depend_on_chunking(items: list[Any], seed: int) -> None:
    text = PREFILL + stream_text(items, random.Random(seed), corrupt=False)
    whole = parse_all(text)
    parser = ActionStreamParser()
    events = []
    for chunk in mutate.chunks(random.Random(seed), text):
        events += parser.feed(chunk)
    events += parser.finish()
    same = json.dumps  # compares NaN equal to NaN
    assert same([e.data for e in events if e.complete]) == same(whole)
    assert same(whole) == same([a for a in items if isinstance(a, dict)])


def test_deep_nesting_is_cut_not_recursed() -> None:
    deep = "[" * 5000 + "1" + "]" * 5000
    text = PREFILL + '{"_type": "message", "text": "hi", "deep": ' + deep + "}]}"
    (action,) = parse_all(text)
    assert action["text"] == "hi"
    node, depth = action["deep"], 0
    while isinstance(node, list) and node:
        node, depth = node[0], depth + 1
    assert depth < MAX_DEPTH
    json.dumps(action)  # no RecursionError downstream either


@FUZZ
@given(items=st.lists(actions(), min_size=1, max_size=8), complete=st.booleans())
def test_registry_sanitizes_anything(items: list[dict[str, Any]], complete: bool) -> None:
    mirror = CanvasMirror()
    mirror.load(SHAPE_SEEDS[0])
    ctx = RunState(shapes=mirror.shapes, todo=[])
    for i, data in enumerate(items):
        out = process(
            data, index=i, complete=complete, incomplete_path=None, ctx=ctx, enabled=select()
        )
        if out is None:
            continue
        for op in out.ops:
            json.dumps(op.params, allow_nan=False)  # finite, encodable JSON only


def run_agent(text: str, seed: int) -> tuple[CanvasMirror, MemorySession, str]:
    model = CannedModel(pieces=mutate.chunks(random.Random(seed), text))
    settings_ = Settings(steward_max_followups=1, steward_watchdog_s=20)
    agent = OneShotRunner(OneShotConfig(settings=settings_, model=model))
    session = MemorySession(MemoryRoom(shapes=list(SHAPE_SEEDS[0])))
    prompt = PromptInput(message="fuzz", source="system", requester="fuzzer")
    outcome = asyncio.run(agent.run(session, prompt))
    return session.canvas, session, outcome


@FUZZ
@given(
    items=st.lists(actions(), min_size=1, max_size=8),
    seed=st.integers(0, 2**32),
    corrupt=st.booleans(),
)
def test_agent_survives_any_stream_and_browsers_match(
    items: list[Any], seed: int, corrupt: bool
) -> None:
    text = stream_text(items, random.Random(seed), corrupt)
    # MemorySession raises if an envelope is oversize, does not encode/decode or apply.
    mirror, session, outcome = run_agent(text, seed)
    assert outcome == "done"
    assert mirror.shapes == session.browser.shapes


def test_valid_scripted_stream_reaches_the_browser() -> None:
    items = SEEDS[:12]
    mirror, session, outcome = run_agent(", ".join(json.dumps(a) for a in items) + "]}", 1)
    assert outcome == "done"
    assert session.room.envelopes > 0 and len(session.browser.shapes) > len(SHAPE_SEEDS[0])
    assert mirror.shapes == session.browser.shapes
