-- The run (session id) each history item belongs to: a one-shotting fairy's history shows
-- other askers' runs in the room one line each, so items keep their run across a restart.
ALTER TABLE fairy_history ADD COLUMN IF NOT EXISTS run text;
