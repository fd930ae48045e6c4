-- Rooms, agent sessions, the envelope outbox with acks, and usage.
CREATE TABLE rooms (
    room_id     text PRIMARY KEY,
    apply_mode  text NOT NULL DEFAULT 'relay' CHECK (apply_mode IN ('relay', 'host')),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agent_sessions (
    session_id  text PRIMARY KEY,
    room_id     text NOT NULL REFERENCES rooms(room_id),
    fairy_id    text,
    source      text NOT NULL,            -- browser | voice | http | relay | system
    requester   text,                     -- participant identity or API client
    model       text NOT NULL,
    status      text NOT NULL,
    outcome     text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    ended_at    timestamptz
);
CREATE INDEX agent_sessions_room ON agent_sessions (room_id, created_at);

-- Every envelope sent, so reconnects and late joiners replay from here.
CREATE TABLE outbox (
    room_id     text NOT NULL REFERENCES rooms(room_id),
    session_id  text NOT NULL,
    seq         integer NOT NULL CHECK (seq >= 1),
    room_order  bigint NOT NULL,          -- order across all sessions of the room
    partial     boolean NOT NULL DEFAULT false,
    payload     jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX outbox_room_order ON outbox (room_id, room_order);

CREATE TABLE acks (
    session_id  text NOT NULL,
    seq         integer NOT NULL,
    participant text NOT NULL,
    applied     jsonb NOT NULL,
    applied_at  double precision NOT NULL,
    PRIMARY KEY (session_id, seq, participant)
);

CREATE TABLE usage (
    session_id      text NOT NULL,
    room_id         text NOT NULL,
    model           text NOT NULL,
    input_tokens    bigint NOT NULL DEFAULT 0,
    output_tokens   bigint NOT NULL DEFAULT 0,
    cache_read_tokens   bigint NOT NULL DEFAULT 0,
    cache_write_tokens  bigint NOT NULL DEFAULT 0,
    cost_usd        numeric(12, 6) NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_room_day ON usage (room_id, created_at);
