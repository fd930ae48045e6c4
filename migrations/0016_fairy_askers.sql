-- Whom each fairy works for (the participant whose prompt started its work) and the model
-- that prompt chose, so cancel rights and the model survive a restart that resumes a project.
ALTER TABLE fairies ADD COLUMN IF NOT EXISTS asker text;
ALTER TABLE fairies ADD COLUMN IF NOT EXISTS model text;
