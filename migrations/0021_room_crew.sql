-- A room's crew as its people chose it: each fairy summoned (or the default crew, written
-- the first time someone changes it), renamed and dismissed. A room with no rows never
-- chose and gets the default crew. Dismissed fairies keep their row, so an id is never
-- handed out twice and a dismissed fairy's past runs still name it.
CREATE TABLE room_crew (
    room_id      text NOT NULL,
    fairy_id     text NOT NULL,
    position     integer NOT NULL,
    name         text NOT NULL,
    personality  text NOT NULL DEFAULT '',
    color        text NOT NULL,
    role         text NOT NULL CHECK (role IN ('solo', 'orchestrator', 'duo-orchestrator', 'drone')),
    created_by   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    dismissed_by text,
    dismissed_at timestamptz,
    PRIMARY KEY (room_id, fairy_id)
);
-- Two fairies of a crew never share a name (people pick fairies by name).
CREATE UNIQUE INDEX room_crew_name ON room_crew (room_id, lower(name)) WHERE dismissed_at IS NULL;

-- Who asked for each project and the prompt's run that started it: abort and undo rights,
-- where the browsers show its card, and (with its fairies' runs while it lasted) what an
-- undo of the whole project takes back.
ALTER TABLE fairy_projects ADD COLUMN IF NOT EXISTS asker text;
ALTER TABLE fairy_projects ADD COLUMN IF NOT EXISTS session_id text;
