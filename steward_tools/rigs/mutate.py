"""Seeded mutators for fuzzing: hostile variants of valid JSON messages and model streams.

Pure and deterministic for a given `random.Random`, so a crash found by `steward bench fuzz`
is reproduced by rerunning with the same seed.
"""

from __future__ import annotations

import gzip
import json
import math
import random
from collections.abc import Callable
from typing import Any

# Values that break naive code: wrong types, extremes, odd unicode, deep nesting.
NASTY: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1e308,
    -1e308,
    2**63,
    -(2**64),
    1e-320,
    0.5,
    "",
    " ",
    "NaN",
    "Infinity",
    "-0",
    "1e999",
    "\x00",
    "\ud800",
    "🧚" * 50,
    "shape:",
    "../../",
    "a" * 20_000,
    [],
    {},
    [None],
    {"": None},
    [[[[[]]]]],
    {"__proto__": {"x": 1}},
)
_SPECIAL_NUMBERS = ("NaN", "Infinity", "-Infinity", "1e999", "-1e999")


def nested(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def mutate_value(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """One structural mutation somewhere inside `value` (a fresh object is returned)."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        out = dict(value)
        key = rng.choice(list(out))
        roll = rng.random()
        if roll < 0.2:
            del out[key]  # a missing field
        elif roll < 0.3:
            out[rng.choice(["extra", "_type", "id", "__class__", key + "x"])] = rng.choice(NASTY)
        else:
            out[key] = mutate_value(rng, out[key], depth + 1)
        return out
    if isinstance(value, list) and value and rng.random() < 0.7:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        roll = rng.random()
        if roll < 0.2:
            del out_list[i]
        elif roll < 0.3:
            out_list.insert(i, rng.choice(NASTY))
        elif roll < 0.4:
            out_list.extend(out_list[i : i + 1] * rng.randrange(1, 300))  # many duplicates
        else:
            out_list[i] = mutate_value(rng, out_list[i], depth + 1)
        return out_list
    roll = rng.random()
    if roll < 0.6:
        return rng.choice(NASTY)
    if roll < 0.7:
        return nested(rng.choice((5, 50, 2000)))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return rng.choice((value * 1e12, -value, value + 0.5, math.inf, -math.inf))
    if isinstance(value, str):
        return value[: rng.randrange(len(value) + 1)] + rng.choice(("", "\\", '"', "\u0000"))
    return rng.choice(NASTY)


def to_text(value: Any) -> str:
    """JSON text; non-finite floats become the NaN/Infinity literals some encoders emit."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except RecursionError:  # deeper than the encoder goes: write the nesting by hand
        return '{"k": ' + "[" * 5000 + "1" + "]" * 5000 + "}"


def mutate_text(rng: random.Random, text: str) -> str:
    """A textual corruption: truncation, byte flips, junk, doubled or missing brackets."""
    if not text:
        return rng.choice(("", "{", "[", "null", '"'))
    roll = rng.random()
    i = rng.randrange(len(text))
    if roll < 0.2:
        return text[:i]
    if roll < 0.35:
        return text[:i] + chr(rng.randrange(0, 0x3000)) + text[i + 1 :]
    if roll < 0.45:
        return text[:i] + rng.choice(("{", "}", "[", "]", ",", ":", '"', "\\", "\\u12")) + text[i:]
    if roll < 0.55:
        j = min(len(text), i + rng.randrange(1, 40))
        return text[:i] + text[j:]
    if roll < 0.65:
        return text[:i] + rng.choice(_SPECIAL_NUMBERS) + text[i:]
    if roll < 0.75:
        return text + text[i:]
    if roll < 0.85:
        return "```json\n" + text + "\n```"
    return "".join(c for c in text if rng.random() > 0.02)


def to_bytes(rng: random.Random, text: str) -> bytes:
    """UTF-8, sometimes with invalid sequences or a BOM."""
    data = text.encode("utf-8", "surrogatepass")
    roll = rng.random()
    if roll < 0.05:
        return b"\xef\xbb\xbf" + data
    if roll < 0.1 and data:
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.choice((0xC0, 0xFF, 0x80, 0xED))]) + data[i:]
    return data


def variants(
    rng: random.Random, seeds: list[Any], count: int, *, raw: Callable[[random.Random], bytes]
) -> list[bytes]:
    """`count` hostile inputs from valid seeds: structural, textual and random raw bytes."""
    out: list[bytes] = []
    for n in range(count):
        seed = rng.choice(seeds)
        kind = n % 5
        if kind == 0:
            out.append(raw(rng))
            continue
        value = seed
        for _ in range(rng.randrange(1, 4)):
            value = mutate_value(rng, value)
        text = to_text(value)
        if kind >= 3:
            text = mutate_text(rng, text)
        out.append(to_bytes(rng, text))
    return out


def random_bytes(rng: random.Random) -> bytes:
    n = rng.choice((0, 1, 2, 16, 300, 70_000))
    return bytes(rng.randrange(256) for _ in range(min(n, 2_000))) * max(1, n // 2_000)


def chunks(rng: random.Random, text: str) -> list[str]:
    """Split a stream into chunks of 1 to ~40 characters, like a model's token stream."""
    out: list[str] = []
    i = 0
    while i < len(text):
        n = rng.choice((1, 1, 2, 3, 4, 4, 4, 7, 16, 40))
        out.append(text[i : i + n])
        i += n
    return out


GZIP_KINDS = ("plain", "gzip", "flipped", "random", "cut", "trailing", "bomb")


def gzip_variant(rng: random.Random, data: bytes, kind: str, *, cap: int) -> tuple[bytes, bool]:
    """`data` as a gzip shapes stream of one `GZIP_KINDS` kind; returns (bytes, gzipped).
    `bomb` is a few KB that inflate past `cap` (must be refused while inflating)."""
    if kind == "plain":
        return data, False
    if kind == "bomb":
        return gzip.compress(b" " * (cap + 10), 9), True
    packed = gzip.compress(data)
    if kind == "flipped":  # a few bytes changed: the CRC, the length or inflate must object
        buf = bytearray(packed)
        for _ in range(rng.randrange(1, 4)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        packed = bytes(buf)
    elif kind == "random":
        packed = rng.randbytes(len(packed))
    elif kind == "cut":
        packed = packed[: rng.randrange(1, len(packed))]
    elif kind == "trailing":  # a second member or garbage after the first
        packed += rng.choice((packed, b"\x00", rng.randbytes(8)))
    return packed, True


def byte_chunks(rng: random.Random, data: bytes) -> list[bytes]:
    """Split a byte stream at random points, as a byte stream's chunks arrive."""
    out: list[bytes] = []
    i = 0
    while i < len(data):
        n = rng.choice((1, 7, 64, 1_000, 15_000))
        out.append(data[i : i + n])
        i += n
    return out
