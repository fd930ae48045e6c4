-- One steward serves a room at a time: it holds the room's lease and renews it. The token
-- grows with every new holder; outbox appends carry it, so a holder that lost the lease
-- (frozen past expiry, partitioned) publishes nothing.
CREATE TABLE room_leases (
    room_id      text PRIMARY KEY,
    owner        text NOT NULL,
    token        bigint NOT NULL,
    acquired_at  timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX room_leases_expiry ON room_leases (expires_at);
