-- The re-dispatch watcher (steward/room/redispatch.py): a lapsed lease is looked at again
-- after this time. Workers claim a lapsed room by moving it forward in one conditional
-- UPDATE, so several workers seeing the same lapse create one dispatch; taking the lease
-- clears it.
ALTER TABLE room_leases ADD COLUMN redispatch_after timestamptz;
