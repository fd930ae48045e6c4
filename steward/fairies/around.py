"""The low-detail image a working fairy gets of the project area around its task area.

It is fetched beside the request's own context, from any browser that renders, and never
holds the request up for long or fails it: when it is late or fails, the request goes
without it (logged).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import replace

from steward.fairies.outlines import outlined
from steward.obs.logging import get_logger
from steward.ports import CanvasSnapshot, Picture, SessionPort
from steward.prompt.parts.neighbours import AROUND_MAX_SIZE, around
from steward.protocol.box import Box

log = get_logger(__name__)

# How long a request waits for the image once its own context is in.
GRACE_S = 2.0


async def _picture(session: SessionPort, area: Box) -> Picture | None:
    try:
        return await session.request_picture(bounds=area, max_size=AROUND_MAX_SIZE)
    except Exception as err:  # the request goes on without it
        log.warning("around_image_failed", session=session.session_id, error=repr(err))
        return None


async def with_around(
    session: SessionPort,
    task_area: Box | None,
    context: Awaitable[CanvasSnapshot],
    grace_s: float = GRACE_S,
    others: Sequence[tuple[str, Box]] = (),
) -> CanvasSnapshot:
    """`context`, with the image around `task_area` (and the `others` task areas near it,
    by task id, outlined and named on it) when one came within `grace_s` of it (None: no
    task area, the context alone)."""
    if task_area is None:
        return await context
    area = around(task_area, (r for _, r in others))
    fetch = asyncio.ensure_future(_picture(session, area))
    try:
        ctx = await context
        done, _ = await asyncio.wait({fetch}, timeout=grace_s)
    finally:
        if not fetch.done():  # late, or the request failed or was cancelled: not wanted
            fetch.cancel()
    if not done:
        log.info("around_image_late", session=session.session_id, waited_s=grace_s)
        return ctx
    picture = fetch.result()
    if picture is None:
        log.info("around_image_missing", session=session.session_id)
        return ctx
    return replace(ctx, around=outlined(picture, task_area, others))
