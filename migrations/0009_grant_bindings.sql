-- Each prompt grant serves the participant session (SID) that first presented it.
CREATE TABLE grant_bindings (
    room_id    text NOT NULL,
    nonce      text NOT NULL,
    identity   text NOT NULL,
    sid        text NOT NULL,
    expires_at timestamptz NOT NULL,
    bound_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (room_id, nonce)
);
CREATE INDEX grant_bindings_expiry ON grant_bindings (expires_at);
