"""Hypothesis fuzzing of every inbound wire message: decode() returns a model or a
ProtocolError for anything at all, and whatever it accepts survives our own encoder."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steward.protocol import ProtocolError, decode
from steward.protocol.limits import MAX_SHAPES_JSON_BYTES
from steward.protocol.messages import CanvasEdit, WireModel
from steward_tools.bench import fuzz
from steward_tools.bench.fuzz import (
    LIMITS,
    Rejected,
    edit_check,
    gzip_shapes_check,
    shapes_check,
)
from steward_tools.rigs import mutate
from steward_tools.rigs.fuzz_seeds import SEEDS

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODELS = sorted(SEEDS, key=lambda m: m.__name__)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)


def check(model: type[WireModel], data: bytes | str) -> None:
    msg = decode(model, data, topic=model.__name__, max_bytes=LIMITS[model])
    if isinstance(msg, ProtocolError):
        assert msg.kind in {"oversize", "invalid_json", "schema"}
        assert str(msg)  # a readable reason, safe to log
        return
    assert isinstance(msg, model)
    again = decode(model, msg.to_wire(), topic="again", max_bytes=10**9)
    assert again == msg


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(model: type[WireModel], data: bytes) -> None:
    check(model, data)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@FUZZ
@given(value=json_values)
def test_arbitrary_json(model: type[WireModel], value: Any) -> None:
    check(model, json.dumps(value, allow_nan=True))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@FUZZ
@given(seed=st.integers(0, 2**32), field_value=json_values)
def test_valid_message_with_one_field_replaced(
    model: type[WireModel], seed: int, field_value: Any
) -> None:
    rng = random.Random(seed)
    base = dict(rng.choice(SEEDS[model]))
    base[rng.choice([*base, "unknown"])] = field_value
    check(model, json.dumps(base, allow_nan=True))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@FUZZ
@given(seed=st.integers(0, 2**32))
def test_mutated_valid_messages(model: type[WireModel], seed: int) -> None:
    rng = random.Random(seed)
    for data in mutate.variants(rng, SEEDS[model], 5, raw=mutate.random_bytes):
        check(model, data)


def test_valid_seeds_are_accepted() -> None:
    for model, seeds in SEEDS.items():
        for seed in seeds:
            assert isinstance(decode(model, json.dumps(seed), topic="t", max_bytes=10**6), model)


def test_non_finite_numbers_are_refused_everywhere() -> None:
    # An encoder writes NaN/Infinity as null: accepting them would split mirror and browsers.
    edit = '{"put": [{"id": "a", "x": Infinity, "props": {"w": NaN}}]}'
    assert isinstance(decode(CanvasEdit, edit, topic="t", max_bytes=10**6), ProtocolError)
    ack = '{"sessionId": "s", "seq": 1, "applied": [], "appliedAt": "Infinity"}'
    assert isinstance(decode(SEEDS_BY_NAME["Ack"], ack, topic="t", max_bytes=999), ProtocolError)


SEEDS_BY_NAME = {m.__name__: m for m in SEEDS}


@FUZZ
@given(seed=st.integers(0, 2**32))
def test_relayed_edits_reach_clients_as_valid_envelopes(seed: int) -> None:
    """canvas:edit → relay actions → steward mirror → packed envelopes → a client replica:
    edit_check raises AssertionError when an envelope is invalid on the wire, the envelopes
    do not carry exactly the actions packed, or the replica differs from the mirror."""
    for data in mutate.variants(random.Random(seed), SEEDS[CanvasEdit], 5, raw=mutate.random_bytes):
        try:
            edit_check(data)
        except Rejected as err:
            assert str(err)  # refused with a reason


def test_valid_edits_reach_a_client_replica_equal_to_the_mirror() -> None:
    """The valid seeds go the whole way (not refused), carrying actions."""
    carried = [edit_check(json.dumps(seed).encode()) for seed in SEEDS[CanvasEdit]]
    assert carried and all(n > 0 for n in carried), carried


def test_edit_check_fails_when_the_replica_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a client that drops the last action it receives goes red."""
    real = fuzz.apply_envelopes

    def lossy(session: str, actions: list[Any], replica: Any) -> None:
        real(session, actions, replica)
        replica.shapes.popitem()

    monkeypatch.setattr(fuzz, "apply_envelopes", lossy)
    with pytest.raises(AssertionError, match="differs from the steward mirror"):
        for seed in SEEDS[CanvasEdit]:
            edit_check(json.dumps(seed).encode())


@FUZZ
@given(
    records=st.lists(
        st.dictionaries(
            st.sampled_from(["id", "type", "x", "y", "props", "rotation", "parentId"]), json_values
        )
    )
)
def test_context_shapes_stream_never_breaks_the_mirror(records: list[dict[str, Any]]) -> None:
    try:
        shapes_check(json.dumps(records).encode())
    except Rejected:
        pass


@FUZZ
@given(
    records=st.lists(st.dictionaries(st.sampled_from(["id", "type", "x", "props"]), json_values)),
    kind=st.sampled_from(mutate.GZIP_KINDS[1:]),
    seed=st.integers(0, 2**16),
)
def test_gzip_shapes_streams_are_inflated_or_refused_with_a_reason(
    records: list[dict[str, Any]], kind: str, seed: int
) -> None:
    data = json.dumps(records).encode()
    packed, gzipped = mutate.gzip_variant(
        random.Random(seed), data, kind, cap=MAX_SHAPES_JSON_BYTES
    )
    assert gzipped
    try:
        gzip_shapes_check(packed)
    except Rejected as err:
        assert str(err)  # refused, with a reason; anything else raised fails the test
        assert kind != "gzip" or str(err) not in {"corrupt_gzip", "oversize"}
    else:
        # Only whole, untouched gzip members get through (a flipped bit may hit the header's
        # unchecked fields, e.g. its mtime, and leave the data intact).
        assert kind in {"gzip", "flipped"}
