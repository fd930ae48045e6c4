"""What every streaming provider does around one attempt at a model request.

An attempt that failed before any text streamed is retried (tenacity, exponential wait); one
that failed after some text is not, since its text is already applied. An optional feature of
the request (a prefill, a temperature, an output limit) that the server refuses with a 400 is
dropped for good and the request asked again, once per feature. The provider supplies the
attempt; this module holds the loop both providers share.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from tenacity import (
    AsyncRetrying,
    RetryError,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from steward.model.base import ModelError
from steward.model.opening import Opening
from steward.obs.logging import get_logger

log = get_logger(__name__)

# One attempt of a request with a given feature set: the text as it streams.
Attempt = Callable[[], AsyncIterator[str]]


class FeatureRefused(Exception):
    """Raised by an attempt, before any text streamed, when the server refused `feature`."""

    def __init__(self, feature: str) -> None:
        super().__init__(feature)
        self.feature = feature


def is_retryable(err: BaseException) -> bool:
    return isinstance(err, ModelError) and err.retryable and not err.started


async def stream_with_retries(
    name: str,
    *,
    refused: set[str],
    features: Callable[[], set[str]],
    prefill: Callable[[set[str]], str],
    attempt_for: Callable[[set[str]], Attempt],
    attempts: int,
    wait_max_s: float,
) -> AsyncIterator[str]:
    """The model's text: `attempt_for(features)` retried while retryable, a refused feature
    added to `refused` and the request asked again without it; the model's own copy of the
    `prefill(features)` opening cut from the front."""
    while True:
        sent = features()
        opening = Opening(prefill(sent))
        try:
            async for text in _retrying(name, attempt_for(sent), attempts, wait_max_s):
                if out := opening.strip(text):
                    yield out
        except FeatureRefused as refusal:
            # Nothing streamed yet: drop the feature and ask again (once per feature).
            refused.add(refusal.feature)
            log.warning("model_feature_refused", model=name, feature=refusal.feature)
            continue
        if rest := opening.flush():
            yield rest
        return


async def _retrying(
    name: str, attempt: Attempt, attempts: int, wait_max_s: float
) -> AsyncIterator[str]:
    retrying = AsyncRetrying(
        retry=retry_if_exception(is_retryable),
        wait=wait_exponential(multiplier=0.2, max=wait_max_s),
        stop=stop_after_attempt(attempts),
        reraise=True,
    )
    try:
        async for tried in retrying:
            with tried:
                async for text in attempt():
                    yield text
                return
    except RetryError as err:  # pragma: no cover - reraise=True makes this unusual
        raise ModelError(f"{name}: gave up after retries") from err
