-- A room's conversation as its tabs show it: prompts, whole chat messages, thoughts and each
-- run's latest status, in the room's own order `n` (numbered by the steward serving the
-- room, which holds its lease). Bounded per room: the steward deletes all but the newest
-- items (`STEWARD_CONVERSATION_ITEMS`). `item_key` names what an item is (a chat message's
-- id, a run's prompt or status), so a later version replaces it in place.
CREATE TABLE conversation_items (
    room_id    text NOT NULL,
    n          bigint NOT NULL,
    item_key   text NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('prompt', 'chat', 'thought', 'status')),
    session_id text NOT NULL,
    payload    jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (room_id, n)
);
CREATE UNIQUE INDEX conversation_items_key ON conversation_items (room_id, item_key);
