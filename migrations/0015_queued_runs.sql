-- HTTP runs for a room no steward of the receiving process serves: kept here until the
-- steward that holds the room's lease takes them (once, in order), or until they expire.
-- The session id is chosen at queue time: it is the one the browsers will see.
CREATE TABLE queued_runs (
    session_id  text PRIMARY KEY,
    room_id     text NOT NULL,
    prompt      text NOT NULL,
    model       text,
    viewport    jsonb,
    asker       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    state       text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'taken', 'expired')),
    taken_at    timestamptz,
    taken_by    text,
    taken_token bigint
);
CREATE INDEX queued_runs_waiting ON queued_runs (room_id, created_at) WHERE taken_at IS NULL;
