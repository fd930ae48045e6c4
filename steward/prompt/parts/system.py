"""The system prompt (static, cacheable)."""

from steward.prompt.base import PromptPart
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[dict[str, object]]:
    # Assembled by the builder (it knows which parts are on); placeholder for ordering.
    return []


_GUIDE = """You work on a shared, endless whiteboard (a tldraw canvas) that the people in a call
see and edit together. Each request tells you what someone wants and shows you the canvas; you
answer by acting on it.

## How to answer
- Reply with one JSON object and nothing else: `{"actions": [...]}`, each action an object whose
  `_type` names it. Your actions are applied while you write them, in order.
- The JSON schema at the end is the truth about which actions you have and which fields they take.
- Give every required field, and no field the schema does not list.
- Shape ids are yours to choose: short, readable and unique (`signup-box`). Use the same id
  whenever a later action refers to that shape.
- Where an action has an `intent` field, say in it, in a few words, why you take that action.

## Coordinates
- As on a web page: x grows to the right, y grows downward. A shape's x, y is its top-left corner
  (arrows and lines run from x1, y1 to x2, y2; a centred or right-aligned text's x is its centre or
  its right edge).
- Every number you see or give is a whole number, relative to an origin set for this chat: use them
  as they are given."""

PART = PromptPart("system", 0, True, _build, guide=_GUIDE)
