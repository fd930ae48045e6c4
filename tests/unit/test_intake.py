"""Prompt intake: the wake phrase and the per-participant rate limit (room/inbound/intake)."""

from __future__ import annotations

from steward.room.inbound.intake import RateLimiter, addressed_text


def test_wake_phrase_and_rate_limit() -> None:
    assert addressed_text("Steward, draw a cat", "steward") == "draw a cat"
    assert addressed_text("hey steward draw a cat", "steward") == "draw a cat"
    assert addressed_text("ask the steward to draw", "steward") == "ask the steward to draw"
    assert addressed_text("stewardship matters", "steward") is None
    assert addressed_text("nothing here", "steward") is None
    t = [0.0]
    limiter = RateLimiter(2, clock=lambda: t[0])
    assert limiter.allow("a") and limiter.allow("a") and not limiter.allow("a")
    assert limiter.allow("b")
    t[0] = 61.0
    assert limiter.allow("a")


def test_rate_limiter_forgets_identities_idle_for_a_minute() -> None:
    t = [0.0]
    limiter = RateLimiter(2, clock=lambda: t[0])
    for i in range(1000):  # identities that come once and go
        assert limiter.allow(f"x{i}")
    assert len(limiter) == 1000
    t[0] = 30.0
    assert limiter.allow("a") and limiter.allow("a")
    t[0] = 61.0
    assert limiter.allow("b")  # the x's went; a's window (at 30 s) is kept
    assert len(limiter) == 2
    assert not limiter.allow("a")
