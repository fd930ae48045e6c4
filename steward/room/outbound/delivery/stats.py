"""Delivery figures: per session (for its end-of-run log line) and per room (flush batching)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class StreamStats:
    """Per-session delivery figures (for the session's end-of-run log line)."""

    envelopes: int = 0
    actions: int = 0
    retransmits: int = 0
    resyncs: int = 0
    previews_coalesced: int = 0  # previews not sent: unacked predecessor, or paced
    previews_paced: int = 0  # of those, held by `preview_interval_s` alone
    last_seq: int = 0
    acks: Counter[str] = field(default_factory=Counter)
    first_envelope_at: float | None = None
    first_applied_at: float | None = None


@dataclass
class FlushStats:
    """Per-room figures of the flushes: how well envelopes share INSERTs and packets."""

    inserts: int = 0  # outbox INSERT statements (one per flush)
    packets: int = 0  # live packets handed to LiveKit (first sends)
    envelopes: int = 0  # envelopes in them
    acks: int = 0  # ack packets taken (a cumulative one counts once)
