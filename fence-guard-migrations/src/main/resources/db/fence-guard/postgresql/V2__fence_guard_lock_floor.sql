-- fence-guard lock floors (docs/fence-lifecycle.md, "DENSE fences"): one row per lock table, holding the
-- highest fence a purge of free lock rows has removed from it. A DENSE acquisition that creates a row starts
-- its counter above the floor, so a purged key never issues a fence again. A new table and one row: the
-- lock table itself is not touched (no rewrite, no lock on it). The row must exist before any purge: a
-- locking read of a missing row locks nothing, so the purge refuses to run without it.
CREATE TABLE IF NOT EXISTS "${fenceGuardSchema}"."fence_guard_lock_floors" (
    lock_table  TEXT   NOT NULL PRIMARY KEY,
    fence_floor BIGINT NOT NULL CHECK (fence_floor BETWEEN 0 AND 900000000000000)
);

INSERT INTO "${fenceGuardSchema}"."fence_guard_lock_floors" (lock_table, fence_floor) VALUES ('${fenceGuardTable}', 0)
    ON CONFLICT (lock_table) DO NOTHING;
