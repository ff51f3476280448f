-- fence-guard idempotency table (docs/idempotency-store.md). One row per idempotency key: the newest
-- holder's fence, the request fingerprint, and the outcome. state: P in progress (expires_at = end of
-- the holder's claim), C completed, R failed and retryable, F failed for good (expires_at = when the
-- outcome was recorded). A row whose retain_until has passed counts as absent and is purged in batches.
-- Placeholders: fenceGuardSchema, fenceGuardTable (set by FenceGuardMigrations.idempotencyBuilder, or
-- by you when you add classpath:db/fence-guard/postgresql-idempotency to your own Flyway locations).
CREATE SCHEMA IF NOT EXISTS "${fenceGuardSchema}";

CREATE TABLE IF NOT EXISTS "${fenceGuardSchema}"."${fenceGuardTable}" (
    idem_key     TEXT        NOT NULL PRIMARY KEY,
    state        CHAR(1)     NOT NULL CHECK (state IN ('P', 'C', 'R', 'F')),
    fingerprint  TEXT        NOT NULL,
    fence        BIGINT      NOT NULL CHECK (fence BETWEEN 1 AND 900000000000000),
    expires_at   TIMESTAMPTZ NOT NULL,
    retain_until TIMESTAMPTZ NOT NULL,
    result       BYTEA       NOT NULL
);

-- The purge's scan: oldest retention first, a batch at a time.
CREATE INDEX IF NOT EXISTS "${fenceGuardTable}_retain_until" ON "${fenceGuardSchema}"."${fenceGuardTable}" (retain_until);

COMMENT ON TABLE "${fenceGuardSchema}"."${fenceGuardTable}" IS
    'fence-guard idempotency entries: outcome of each idempotency key under the newest holder''s fence';
