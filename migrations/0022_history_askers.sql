-- Who wrote each request a fairy remembers (a person's prompt): a later request's history
-- names them ("[alice asked] …") instead of a bare "[user]", across a restart too.
ALTER TABLE fairy_history ADD COLUMN IF NOT EXISTS asker text;
