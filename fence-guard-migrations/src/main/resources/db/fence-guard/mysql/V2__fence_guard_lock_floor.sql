-- fence-guard lock floors (docs/fence-lifecycle.md, "DENSE fences"), the PostgreSQL layout: one row per lock
-- table, holding the highest fence a purge of free lock rows has removed from it. A DENSE acquisition that
-- creates a row starts its counter above the floor, so a purged key never issues a fence again. A new table
-- and one row: the lock table itself is not touched. The row must exist before any purge (a locking read
-- of a missing row locks a gap, not a row), so the purge refuses to run without it.
CREATE TABLE IF NOT EXISTS `${fenceGuardSchema}`.`fence_guard_lock_floors` (
    lock_table  VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    fence_floor BIGINT NOT NULL CHECK (fence_floor BETWEEN 0 AND 900000000000000)
) ENGINE=InnoDB
  COMMENT='fence-guard: per lock table, the highest fence a purge removed; new rows of DENSE locks start above it';

INSERT INTO `${fenceGuardSchema}`.`fence_guard_lock_floors` (lock_table, fence_floor) VALUES ('${fenceGuardTable}', 0)
    ON DUPLICATE KEY UPDATE lock_table = lock_table;
