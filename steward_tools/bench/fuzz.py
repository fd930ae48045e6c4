"""`steward bench fuzz`: hostile variants of every inbound input; the steward must never crash.

Each target is the code an input meets first in the steward (decode → handler logic → what
it sends on), run in-process. An input is *rejected* when that code refuses it with its
clear error (ProtocolError, ValueError, ContextFailure, a dropped action); a *crash* is any
other exception escaping, or an invalid envelope leaving for the browsers.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from steward.canvas.mirror import CanvasMirror
from steward.commands.setup import print_json
from steward.config import Settings
from steward.fairies.one_shot_runner import OneShotConfig, OneShotRunner
from steward.model.scripted import ScriptedModel
from steward.obs.logging import configure_logging
from steward.ports import PromptInput
from steward.protocol import ProtocolError, decode
from steward.protocol.limits import (
    MAX_DATA_PACKET_BYTES,
    MAX_ENVELOPE_BYTES,
    MAX_RPC_PAYLOAD_BYTES,
    MAX_SHAPES_JSON_BYTES,
)
from steward.protocol.messages import (
    Ack,
    ActionEnvelope,
    CancelRequest,
    CanvasEdit,
    ComposingHint,
    ContextReply,
    PromptRequest,
    Resync,
    ViewportUpdate,
    WireAction,
    WireModel,
)
from steward.room.inbound.intake import addressed_text
from steward.room.inbound.stream_inbox import (
    ContextFailure,
    CorruptGzip,
    Inflater,
    Oversize,
    parse_shapes,
)
from steward.room.outbound.envelopes import FragmentAssembler, is_fragment, pack
from steward.room.outbound.relay import edit_to_actions
from steward_tools.canned_model import CannedModel
from steward_tools.memory_session import MemoryRoom, MemorySession
from steward_tools.rigs import mutate
from steward_tools.rigs.fuzz_seeds import SEEDS, SHAPE_SEEDS

LIMITS: dict[type[WireModel], int] = {
    Ack: MAX_ENVELOPE_BYTES,
    Resync: MAX_ENVELOPE_BYTES,
    ViewportUpdate: MAX_ENVELOPE_BYTES,
    CanvasEdit: MAX_DATA_PACKET_BYTES,
    ComposingHint: MAX_ENVELOPE_BYTES,
    PromptRequest: MAX_RPC_PAYLOAD_BYTES,
    CancelRequest: MAX_RPC_PAYLOAD_BYTES,
    ContextReply: MAX_RPC_PAYLOAD_BYTES,
}


class Rejected(Exception):
    """The target refused the input with its own clear error."""


@dataclass
class Target:
    """One input the fuzz bench attacks: how its hostile variants are made, and what they meet."""

    name: str
    inputs: Callable[[random.Random, int], list[bytes]]
    check: Callable[[bytes], object]  # raises Rejected, or anything else = crash


@dataclass
class TargetResult:
    """How one fuzz target went: inputs, rejections, crashes and examples of the crashes."""

    inputs: int = 0
    rejected: int = 0
    crashes: int = 0
    examples: list[str] = field(default_factory=list)


def _decoded(model: type[WireModel], data: bytes, topic: str) -> WireModel:
    msg = decode(model, data, topic=topic, max_bytes=LIMITS[model])
    if isinstance(msg, ProtocolError):
        raise Rejected(str(msg))
    # What was accepted must survive our own encoder and decoder unchanged.
    again = decode(model, msg.to_wire(), topic=topic, max_bytes=10**9)
    if isinstance(again, ProtocolError) or again != msg:
        raise AssertionError(f"accepted {model.__name__} does not round-trip: {again}")
    return msg


def _message_target(model: type[WireModel]) -> Target:
    def inputs(rng: random.Random, n: int) -> list[bytes]:
        return mutate.variants(rng, SEEDS[model], n, raw=mutate.random_bytes)

    def check(data: bytes) -> None:
        _decoded(model, data, model.__name__)

    return Target(f"protocol:{model.__name__}", inputs, check)


def apply_envelopes(session: str, actions: list[Any], replica: CanvasMirror) -> None:
    """Pack like the broadcaster, then decode and apply like a client. Every envelope must be
    valid on the wire (within the size limit, decoding under the schema) and together they
    must carry exactly the actions packed, in order (fragments reassembled)."""
    assembler = FragmentAssembler()
    carried: list[WireAction] = []
    for seq, group in enumerate(pack(session, actions), start=1):
        env = ActionEnvelope(session_id=session, seq=seq, actions=group, ts=0.0)
        payload = env.to_wire()
        if len(payload) > MAX_ENVELOPE_BYTES:
            raise AssertionError(f"envelope of {len(payload)} bytes")
        back = decode(ActionEnvelope, payload, topic="agent:action", max_bytes=MAX_ENVELOPE_BYTES)
        if isinstance(back, ProtocolError):
            raise AssertionError(f"relayed envelope does not decode: {back}")
        if back.session_id != session or back.seq != seq:
            raise AssertionError(f"envelope {seq} came back as {back.session_id}:{back.seq}")
        for action in back.actions:
            if is_fragment(action.params):
                params = assembler.add(action.id, action.params)
                if params is None:
                    continue
                action = action.model_copy(update={"params": params})
            carried.append(action)
            replica.apply_one(action, partial=False, session=session)
    if carried != list(actions):
        raise AssertionError(
            f"envelopes carried {[a.id for a in carried]}, packed {[a.id for a in actions]}"
        )


def edit_check(data: bytes) -> int:
    """canvas:edit → relay → broadcaster mirror → envelopes → a client's replica, which must
    equal the steward's mirror (same shapes, same order). Returns how many actions went."""
    edit = _decoded(CanvasEdit, data, "canvas:edit")
    assert isinstance(edit, CanvasEdit)
    try:
        actions = edit_to_actions(edit, "fuzzer")
    except ValueError as err:
        raise Rejected(str(err)) from err
    steward_mirror = CanvasMirror()
    for action in actions:
        steward_mirror.apply_one(action, session="relay")
    replica = CanvasMirror()
    apply_envelopes("relay", actions, replica)
    if list(replica.shapes.items()) != list(steward_mirror.shapes.items()):
        differ = sorted(
            k
            for k in set(replica.shapes) | set(steward_mirror.shapes)
            if replica.shapes.get(k) != steward_mirror.shapes.get(k)
        )
        order = list(replica.shapes) != list(steward_mirror.shapes)
        raise AssertionError(
            f"client replica differs from the steward mirror: {differ[:5]}"
            + (" (order)" if order else "")
        )
    return len(actions)


def shapes_check(data: bytes) -> None:
    """The host's `agent:context` shapes stream → the agent's mirror."""
    if len(data) > MAX_SHAPES_JSON_BYTES:
        raise Rejected("oversize")
    try:
        shapes = parse_shapes(data)
    except ContextFailure as err:
        raise Rejected(str(err)) from err
    CanvasMirror().load(shapes)


def _gzip_shapes_inputs(rng: random.Random, n: int) -> list[bytes]:
    """Shapes streams sent as `application/gzip`: valid, bit-flipped, random, cut short, with
    trailing bytes, bombs; the payloads are the plain target's hostile JSON."""
    plain = mutate.variants(rng, SHAPE_SEEDS, n, raw=mutate.random_bytes)
    kinds = [k for k in mutate.GZIP_KINDS if k != "plain"]
    return [
        mutate.gzip_variant(rng, data, kinds[i % len(kinds)], cap=MAX_SHAPES_JSON_BYTES)[0]
        for i, data in enumerate(plain)
    ]


_CHUNK_RNG = random.Random(0)  # where streams split: seeded, so a crash reproduces


def gzip_shapes_check(data: bytes) -> None:
    """The steward's streaming inflate (chunks as they arrive, capped), then the shapes path."""
    inflater = Inflater(MAX_SHAPES_JSON_BYTES)
    try:
        for chunk in mutate.byte_chunks(_CHUNK_RNG, data):
            inflater.feed(chunk)
        inflated = inflater.finish()
    except CorruptGzip as err:
        raise Rejected("corrupt_gzip") from err
    except Oversize as err:
        raise Rejected("oversize") from err
    shapes_check(inflated)


def _transcription_check(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    if addressed_text(text, "steward") is None:
        raise Rejected("not addressed")


def _transcription_inputs(rng: random.Random, n: int) -> list[bytes]:
    seeds = ["steward, draw a cat", "hey Steward draw boxes", "please ask the steward"]
    return [mutate.to_bytes(rng, mutate.mutate_text(rng, rng.choice(seeds))) for _ in range(n)]


# --- model streams ------------------------------------------------------------------------
_SCRIPT = ScriptedModel(tokens_per_s=None)
_PROMPTS = (
    "draw a flow chart of our signup",
    "three sticky notes about ideas plans goals",
    "draw a red circle",
    "sketch something",
    "clear the canvas",
    "hello there",
)


def action_seeds() -> list[dict[str, Any]]:
    seeds: list[dict[str, Any]] = []
    for p in _PROMPTS:
        seeds.extend(_SCRIPT.actions_for({"message": p}))
    canvas = [
        {"id": sid, "type": kind, "at": [x, 0], "box": [x, 0, 100, 50]}
        for sid, kind, x in (
            ("step-cart", "rectangle", 0),
            ("step-pay", "ellipse", 200),
            ("step-done", "rectangle", 400),
            ("arrow-1", "arrow", 100),
        )
    ]
    selection = ["step-cart", "step-pay", "step-done", "arrow-1", "x"]
    for verb in ("align", "distribute", "stack"):
        hints = {"message": f"{verb} them", "selection": selection, "canvas": canvas}
        seeds.extend(_SCRIPT.actions_for(hints))
    return seeds


def _model_inputs(rng: random.Random, n: int) -> list[bytes]:
    """Whole responses: valid actions mixed with mutated ones, then textual corruption."""
    seeds = action_seeds()
    out: list[bytes] = []
    for i in range(n):
        actions: list[Any] = []
        for _ in range(rng.randrange(1, 12)):
            a: Any = rng.choice(seeds)
            if rng.random() < 0.6:
                a = mutate.mutate_value(rng, a)
            if rng.random() < 0.1:
                a = {"_type": rng.choice(("explode", "create_shape", 7, None, "")), "x": 1}
            actions.append(a)
        text = ", ".join(mutate.to_text(a) for a in actions) + "]}"
        if i % 2:
            text = mutate.mutate_text(rng, text)
        out.append(text.encode("utf-8", "surrogatepass"))
    return out


class _ModelStreamCheck:
    """The whole agent path on one stream: parse → sanitize → resolve → envelopes → client."""

    def __init__(self) -> None:
        settings = Settings(steward_max_followups=1, steward_watchdog_s=20)
        self.settings = settings
        self.rng = random.Random(0)

    def __call__(self, data: bytes) -> None:
        text = data.decode("utf-8", "surrogatepass")
        model = CannedModel(pieces=mutate.chunks(self.rng, text))
        agent = OneShotRunner(OneShotConfig(settings=self.settings, model=model))
        session = MemorySession(MemoryRoom(shapes=list(SHAPE_SEEDS[0])))
        prompt = PromptInput(message="fuzz", source="system", requester="fuzzer")
        outcome = asyncio.run(agent.run(session, prompt))
        if outcome != "done":
            raise AssertionError(f"agent outcome {outcome!r}")
        if session.canvas.shapes != session.browser.shapes:
            raise AssertionError("the steward's mirror and the browser's canvas diverged")
        if session.room.envelopes == 0:
            raise Rejected("no action survived the sanitizer")


def targets() -> list[Target]:
    out = [_message_target(m) for m in SEEDS]
    out.append(Target("relay:canvas:edit", _message_target(CanvasEdit).inputs, edit_check))
    out.append(
        Target(
            "stream:agent:context",
            lambda rng, n: mutate.variants(rng, SHAPE_SEEDS, n, raw=mutate.random_bytes),
            shapes_check,
        )
    )
    out.append(Target("stream:agent:context:gzip", _gzip_shapes_inputs, gzip_shapes_check))
    out.append(Target("text:lk.transcription", _transcription_inputs, _transcription_check))
    out.append(Target("model:stream", _model_inputs, _ModelStreamCheck()))
    return out


def run_target(target: Target, data: list[bytes], result: TargetResult) -> None:
    for item in data:
        result.inputs += 1
        try:
            target.check(item)
        except Rejected:
            result.rejected += 1
        except Exception:  # a crash: keep a short reproducer
            result.crashes += 1
            if len(result.examples) < 3:
                tb = traceback.format_exc(limit=4).strip().splitlines()[-1]
                result.examples.append(f"{item[:160]!r}: {tb}")


def run(per_target: int = 400, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    t0 = time.perf_counter()
    by_target: dict[str, dict[str, Any]] = {}
    total = TargetResult()
    for target in targets():
        result = TargetResult()
        run_target(target, target.inputs(rng, per_target), result)
        by_target[target.name] = {
            "inputs": result.inputs,
            "rejected": result.rejected,
            "crashes": result.crashes,
            **({"examples": result.examples} if result.examples else {}),
        }
        total.inputs += result.inputs
        total.rejected += result.rejected
        total.crashes += result.crashes
    return {
        "inputs": total.inputs,
        "rejected": total.rejected,
        "crashes": total.crashes,
        "seed": seed,
        "seconds": round(time.perf_counter() - t0, 2),
        "targets": by_target,
    }


def _handler(args: argparse.Namespace) -> int:
    # Every refusal logs a line by design; thousands of them would drown the result.
    configure_logging("error", "json")
    if args.live:
        from steward_tools.bench.fuzz_live import run_bench

        result = asyncio.run(run_bench(args.per_path, args.seed, args.limit_s))
    else:
        result = run(args.per_target, args.seed)
    if args.json:
        print_json(result)
    else:
        print(
            f"{result['inputs']} inputs: {result['rejected']} rejected, {result['crashes']} crashes"
        )
    failed = result["crashes"] or (args.live and not result["other_room_ok"])
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("fuzz", help="hostile inputs for every inbound path; crashes must be 0")
    p.add_argument("--json", action="store_true")
    p.add_argument("--per-target", type=int, default=400)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--live",
        action="store_true",
        help="through a real livekit-server and Postgres, while another room is served "
        "(run inside ./ops/netns-run.sh)",
    )
    p.add_argument("--per-path", type=int, default=40, help="--live: inputs per inbound path")
    p.add_argument("--limit-s", type=float, default=120.0, help="--live: time bound of the flood")
    p.set_defaults(handler=_handler)
