"""`fly-to-bounds`: fly to an area of the canvas (others see you move)."""

from __future__ import annotations

from typing import Any

from steward.actions.base import ActionModel
from steward.actions.fairy.field_values import area_field
from steward.actions.fairy.spec import fairy_spec
from steward.actions.fairy_port import FairyPort


class FlyTo(ActionModel):
    """What the model writes for `fly-to-bounds`: the page area the fairy flies to."""

    x: float
    y: float
    w: float
    h: float


def _fly_to(fairy: FairyPort, data: dict[str, Any]) -> None:
    fairy.move(area_field(data))


# Its system-prompt section (ActionSpec.guide); docs/PROMPT.md maps the kit's rules to it.
_FLY_TO_BOUNDS = """Fly to an area of the canvas; the others see you go there, and your next
requests show that area. It changes where you are and what you see, not what you may edit."""

FLY_TO_BOUNDS = fairy_spec(
    "fly-to-bounds",
    schema=FlyTo,
    description="Fly to an area of the canvas (others see you move).",
    guide=_FLY_TO_BOUNDS,
    effect=_fly_to,
)
