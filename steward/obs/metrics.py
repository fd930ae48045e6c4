"""Prometheus metrics of the room runtime (served on /metrics by steward.api)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

ENVELOPES = Counter(
    "steward_envelopes_total",
    "Action envelopes published, by kind (live, retransmit, replay)",
    ["kind"],
)
PACKETS_PUBLISHED = Counter(
    "steward_packets_published_total",
    "Data packets the steward handed to LiveKit, by topic (actions, chat, status, ...)",
    ["topic"],
)
RETRANSMITS = Counter(
    "steward_retransmits_total", "Envelopes retransmitted to lagging participants"
)
RESYNCS = Counter("steward_resyncs_total", "Outbox replays to a participant, by reason", ["reason"])
ACKS = Counter("steward_acks_total", "Acks (applied envelopes) received from browsers")
ACKS_DROPPED = Counter(
    "steward_acks_dropped_total",
    "Acks for sessions or seqs never sent to their sender, or over the rate; never written",
    ["reason"],
)
SESSIONS = Counter("steward_sessions_total", "Agent sessions ended, by outcome", ["outcome"])
QUALITY_PROBLEMS = Counter(
    "steward_quality_problems_total",
    "Problems the quality report found in what sessions drew, by kind (unintended_overlaps, "
    "overflowing_text, loose_arrows, outside_bounds, outside_viewport, locked_or_partial)",
    ["kind"],
)
ACTIVE_SESSIONS = Gauge("steward_active_sessions", "Agent sessions running now")
CONNECTED_ROOMS = Gauge("steward_connected_rooms", "Rooms this process serves now")
FIRST_ENVELOPE_SECONDS = Histogram(
    "steward_time_to_first_envelope_seconds",
    "From prompt accepted to the session's first envelope published",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
)
FIRST_APPLIED_SECONDS = Histogram(
    "steward_time_to_first_applied_seconds",
    "From prompt accepted to the first ack of the session's envelopes",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
)
CONTEXT_SECONDS = Histogram(
    "steward_context_latency_seconds",
    "Context requests to browsers, by result (ok, cached, prefetched, degraded)",
    ["result"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10),
)
CONTEXT_PREFETCH_SECONDS = Histogram(
    "steward_context_prefetch_seconds",
    "Background context fetches started by composing hints, by result (ok, failed)",
    ["result"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10),
)
COMPOSING_HINTS = Counter(
    "steward_composing_hints_total",
    "Composing hints (steward:composing, voice segments), by outcome "
    "(started, cached, in_flight, no_host, dropped, refused)",
    ["source", "outcome"],
)
REJECTED_INBOUND = Counter(
    "steward_rejected_inbound_total",
    "Inbound messages refused, by topic and reason",
    ["topic", "reason"],
)
MODEL_ACTIONS = Counter(
    "steward_model_actions_total",
    "Complete actions a model sent, by outcome (applied, refused with a logged reason)",
    ["outcome"],
)
PROMPTS_REFUSED = Counter("steward_prompts_refused_total", "Prompts refused, by reason", ["reason"])
PARTICIPANTS_MUTED = Counter(
    "steward_participants_muted_total",
    "Participants whose data publishing the steward revoked for repeated abuse",
)
BUDGET_EXCEEDED = Counter(
    "steward_budget_exceeded_total", "Runs refused because their room's daily budget was spent"
)


def packets_by_topic() -> dict[str, float]:
    """`steward_packets_published_total` now, per topic (benches diff two of these)."""
    return {
        sample.labels["topic"]: sample.value
        for metric in PACKETS_PUBLISHED.collect()
        for sample in metric.samples
        if sample.name.endswith("_total")
    }
