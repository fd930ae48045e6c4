"""`steward bench parse`: incremental parsing vs re-parsing the whole buffer per chunk.

Both sides get the same ~8,000-token response in the same ~4-character chunks. The baseline
is the starter kit's approach: on every chunk, repair the whole buffer into valid JSON
(close the open string and containers) and parse it with the C `json` module.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from typing import Any

from steward.commands.setup import print_json
from steward.model.base import PREFILL
from steward.model.parser import ActionStreamParser
from steward.model.scripted import ScriptedModel

CHUNK = 4
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*("|\\?$)|[\[\]{}]')


def sample_response(target_tokens: int = 8000) -> str:
    """A realistic response: scripted flow charts, repeated with fresh ids, ~4 chars/token."""
    model = ScriptedModel()
    base = model.actions_for({"message": "draw a flow chart of our signup"})
    actions: list[dict[str, Any]] = []
    n = 0
    while len(json.dumps(actions)) < target_tokens * CHUNK:
        for a in base:
            a = json.loads(json.dumps(a).replace('"d1-', f'"d{n + 1}-'))
            actions.append(a)
        n += 1
    return PREFILL + ", ".join(json.dumps(a) for a in actions) + "]}"


def reparse_all(buffer: str) -> list[Any]:
    """Best-effort parse of a partial buffer from scratch (the baseline)."""
    start = buffer.find("{")
    body = buffer[start:]
    closers: list[str] = []
    in_string = False
    for m in _TOKENS.finditer(body):
        tok = m.group(0)
        if tok.startswith('"'):
            in_string = not (len(tok) > 1 and tok.endswith('"') and not tok.endswith('\\"'))
        elif tok in "[{":
            closers.append("]" if tok == "[" else "}")
        elif closers:
            closers.pop()
    text = body + ('"' if in_string else "")
    text = re.sub(r"[,:]\s*$", "", text)
    for _ in range(3):
        try:
            value = json.loads(text + "".join(reversed(closers)))
            return list(value.get("actions", [])) if isinstance(value, dict) else []
        except ValueError:
            # Drop a dangling key (`, "note"`), else the last character.
            cut = re.sub(r',\s*"[^"]*"\s*:?\s*$', "", text)
            text = cut if cut != text else text[:-1]
    return []


def run(tokens: int = 8000) -> dict[str, Any]:
    text = sample_response(tokens)
    chunks = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]
    t0 = time.process_time()
    parser = ActionStreamParser()
    complete = 0
    for c in chunks:
        complete += sum(1 for e in parser.feed(c) if e.complete)
    complete += sum(1 for e in parser.finish() if e.complete)
    inc = time.process_time() - t0
    t0 = time.process_time()
    buffer = ""
    last: list[Any] = []
    for c in chunks:
        buffer += c
        last = reparse_all(buffer)
    rep = time.process_time() - t0
    assert complete == len(last), (complete, len(last))
    return {
        "tokens": len(chunks),
        "actions": complete,
        "incremental_cpu_s": round(inc, 4),
        "reparse_cpu_s": round(rep, 4),
        "ratio": round(rep / inc, 1) if inc > 0 else None,
    }


def _handler(args: argparse.Namespace) -> int:
    result = run(args.tokens)
    if args.json:
        print_json(result)
    else:
        print(
            f"{result['tokens']} tokens: incremental {result['incremental_cpu_s']}s, "
            f"reparse {result['reparse_cpu_s']}s, ratio {result['ratio']}"
        )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("parse", help="incremental parser vs re-parse per chunk")
    p.add_argument("--json", action="store_true")
    p.add_argument("--tokens", type=int, default=8000)
    p.set_defaults(handler=_handler)
