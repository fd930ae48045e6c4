"""The system prompt (static, cacheable)."""

from steward.prompt.base import PromptPart
from steward.prompt.state import PromptState


def _build(state: PromptState) -> list[dict[str, object]]:
    # Assembled by the builder (it knows which parts are on); placeholder for ordering.
    return []


PART = PromptPart("system", 0, True, _build)
