"""The system prompt, built from the sections the enabled parts and actions carry.

The `system` part's guide opens it (role, how to answer, coordinates); then each enabled
part's guide (what the request shows and how to read it) in priority order; then each
enabled action's guide (how and when to use it) in registry order; then the response schema.
A mode's prompt therefore teaches exactly what that mode can see and do.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable

from steward.actions.registry import select
from steward.prompt.base import PromptPart
from steward.prompt.response_schema import response_schema


def flow(guide: str) -> str:
    """Guides are wrapped to fit the source; the model gets one line per paragraph or bullet."""
    lines: list[str] = []
    for line in guide.strip().splitlines():
        joins = lines and lines[-1] and line.strip() and not line.startswith("- ")
        if joins:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line.rstrip())
    return "\n".join(lines)


def system_prompt(actions: Iterable[str], parts: Iterable[PromptPart], mode: str) -> str:
    return _system_prompt(tuple(actions), frozenset(parts), mode)


# Building the response schema with pydantic costs ~70 ms of CPU; every request of every
# room asked for it again (the largest steward-side cost in the 50-room profile).
@functools.lru_cache(maxsize=64)
def _system_prompt(actions: tuple[str, ...], parts: frozenset[PromptPart], mode: str) -> str:
    specs = select(actions)
    out = [f"# Canvas agent ({mode})"]
    for part in sorted(parts, key=lambda p: (p.priority, p.name)):
        if part.guide:
            guide = flow(part.guide)
            out.append(f"## {part.title}\n{guide}" if part.title else guide)
    guided = [s for s in specs.values() if s.guide]
    if guided:
        out.append("## Actions")
        out.extend(f"### `{s.name}`\n{flow(s.guide)}" for s in guided)
    out.append(
        "## Response JSON schema\n"
        + json.dumps(response_schema(specs), sort_keys=True, separators=(",", ":"))
    )
    return "\n\n".join(out)
