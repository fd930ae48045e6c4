-- Fairies: roster and modes, memory-levelled history, todos, projects, tasks, waits, and
-- the request queue that lets a restarted steward resume each fairy where it stopped.
CREATE TABLE fairies (
    room_id       text NOT NULL,
    fairy_id      text NOT NULL,
    name          text NOT NULL,
    color         text NOT NULL,
    role          text NOT NULL CHECK (role IN ('solo', 'orchestrator', 'duo-orchestrator', 'drone')),
    mode          text NOT NULL,
    x             double precision NOT NULL DEFAULT 0,
    y             double precision NOT NULL DEFAULT 0,
    personality   text NOT NULL DEFAULT '',
    task_bounds   jsonb,
    continuations integer NOT NULL DEFAULT 0,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (room_id, fairy_id)
);

CREATE TABLE fairy_history (
    room_id       text NOT NULL,
    fairy_id      text NOT NULL,
    ordinal       bigserial,
    item_id       text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('prompt', 'action', 'feedback', 'memory-transition')),
    memory_level  text NOT NULL CHECK (memory_level IN ('fairy', 'project', 'task')),
    text          text NOT NULL,
    origin        text,
    action        jsonb,
    user_text     text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (room_id, fairy_id, item_id)
);
CREATE INDEX fairy_history_order ON fairy_history (room_id, fairy_id, ordinal);

CREATE TABLE fairy_todos (
    room_id   text NOT NULL,
    fairy_id  text NOT NULL,
    todo_id   integer NOT NULL,
    text      text NOT NULL,
    status    text NOT NULL CHECK (status IN ('todo', 'in-progress', 'done')),
    PRIMARY KEY (room_id, fairy_id, todo_id)
);

CREATE TABLE fairy_projects (
    project_id    text PRIMARY KEY,
    room_id       text NOT NULL,
    title         text NOT NULL,
    description   text NOT NULL DEFAULT '',
    plan          text NOT NULL DEFAULT '',
    kind          text NOT NULL CHECK (kind IN ('orchestrated', 'duo')),
    orchestrator  text NOT NULL,
    members       text[] NOT NULL,
    status        text NOT NULL CHECK (status IN ('active', 'done', 'aborted')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fairy_projects_room ON fairy_projects (room_id, status);

CREATE TABLE fairy_tasks (
    task_id      text PRIMARY KEY,
    room_id      text NOT NULL,
    project_id   text REFERENCES fairy_projects(project_id),
    title        text NOT NULL,
    text         text NOT NULL DEFAULT '',
    status       text NOT NULL CHECK (status IN ('todo', 'in-progress', 'done')),
    assigned_to  text,
    bounds       jsonb,
    created_by   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fairy_tasks_room ON fairy_tasks (room_id, project_id);

CREATE TABLE fairy_waits (
    room_id    text NOT NULL,
    agent_id   text NOT NULL,
    key        text NOT NULL,      -- task-completed:<id> | agent-mode-transition:<agent>:<mode>
    message    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (room_id, agent_id, key)
);

-- Every request a fairy must handle, in order: pending → running → done | canceled.
-- A steward that dies leaves 'running' rows; the next one resumes them.
CREATE TABLE fairy_requests (
    request_id  bigserial PRIMARY KEY,
    room_id     text NOT NULL,
    fairy_id    text NOT NULL,
    text        text NOT NULL,
    origin      text NOT NULL,
    state       text NOT NULL CHECK (state IN ('pending', 'running', 'done', 'canceled')),
    session_id  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fairy_requests_open ON fairy_requests (room_id, fairy_id, state, request_id);
