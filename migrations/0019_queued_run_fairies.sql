-- The fairies an HTTP run is for, in the order picked (empty: none picked), kept with a run
-- queued for its room's steward.
ALTER TABLE queued_runs ADD COLUMN fairies text[] NOT NULL DEFAULT '{}';
