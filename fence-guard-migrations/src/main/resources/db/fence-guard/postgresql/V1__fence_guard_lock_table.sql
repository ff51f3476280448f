-- fence-guard lock table (DESIGN §3). One row per lock key, never deleted: the fence counter lives
-- with the lock, so it survives releases and client restarts. A free lock has lock_id and expires_at
-- NULL. Placeholders: fenceGuardSchema, fenceGuardTable (set by FenceGuardMigrations, or by you when
-- you add classpath:db/fence-guard/postgresql to your own Flyway locations).
CREATE SCHEMA IF NOT EXISTS "${fenceGuardSchema}";

CREATE TABLE IF NOT EXISTS "${fenceGuardSchema}"."${fenceGuardTable}" (
    lock_key    TEXT        NOT NULL PRIMARY KEY,
    fence       BIGINT      NOT NULL CHECK (fence BETWEEN 1 AND 900000000000000),
    lock_id     TEXT        NULL,
    expires_at  TIMESTAMPTZ NULL,
    acquired_at TIMESTAMPTZ NULL,
    CHECK ((lock_id IS NULL) = (expires_at IS NULL))
);

COMMENT ON TABLE "${fenceGuardSchema}"."${fenceGuardTable}" IS
    'fence-guard locks: fence is the last token issued for lock_key; lock_id/expires_at are NULL when free';
