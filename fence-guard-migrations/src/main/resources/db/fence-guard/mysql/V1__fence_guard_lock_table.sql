-- fence-guard lock table for MariaDB 10.5+ (MariaDbLockBackend), the layout of the PostgreSQL one
-- (DESIGN §3): one row per lock key, never deleted, the fence counter living with the lock. A free lock
-- has lock_id and expires_at NULL. lock_key holds the key's UTF-8 bytes: text collations fold case and
-- ignore trailing spaces, which would make distinct keys one lock. Times are UTC, DATETIME(6).
-- fence 0 is a row an extend of a never-locked key left (free, no fence issued).
-- Placeholders: fenceGuardSchema (a database), fenceGuardTable.
CREATE TABLE IF NOT EXISTS `${fenceGuardSchema}`.`${fenceGuardTable}` (
    lock_key    VARBINARY(512) NOT NULL PRIMARY KEY,
    fence       BIGINT         NOT NULL CHECK (fence BETWEEN 0 AND 900000000000000),
    lock_id     CHAR(22) CHARACTER SET ascii COLLATE ascii_bin NULL,
    expires_at  DATETIME(6)    NULL,
    acquired_at DATETIME(6)    NULL,
    CHECK ((lock_id IS NULL) = (expires_at IS NULL))
) ENGINE=InnoDB
  COMMENT='fence-guard locks: fence is the last token issued for lock_key; lock_id/expires_at are NULL when free';
