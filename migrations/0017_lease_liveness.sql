-- A lease's owner process holds a session advisory lock (steward/store/liveness.py) on
-- (namespace, owner_key) over a connection of its own. Postgres drops the lock the moment
-- that process dies (its socket closes), so a lease whose owner's lock is gone counts as
-- lapsed before it expires. NULL: no liveness known, the expiry alone decides.
ALTER TABLE room_leases ADD COLUMN owner_key bigint;
