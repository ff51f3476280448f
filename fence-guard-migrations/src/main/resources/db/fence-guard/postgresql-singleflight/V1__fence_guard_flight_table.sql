-- fence-guard singleflight table (docs/singleflight.md). One row per flight key, kept: flight_fence is
-- the fence of the newest flight begun, so a zombie's late publish (an older fence) is refused even
-- after the result expired. result/result_fence/result_expires_at are NULL while a flight runs.
-- Placeholders: fenceGuardSchema, fenceGuardTable (set by SingleflightMigrations).
CREATE SCHEMA IF NOT EXISTS "${fenceGuardSchema}";

CREATE TABLE IF NOT EXISTS "${fenceGuardSchema}"."${fenceGuardTable}" (
    flight_key        TEXT        NOT NULL PRIMARY KEY,
    flight_fence      BIGINT      NOT NULL CHECK (flight_fence BETWEEN 1 AND 900000000000000),
    result            BYTEA       NULL,
    result_fence      BIGINT      NULL,
    result_expires_at TIMESTAMPTZ NULL,
    updated_at        TIMESTAMPTZ NOT NULL,
    CHECK ((result IS NULL) = (result_fence IS NULL) AND (result IS NULL) = (result_expires_at IS NULL)),
    CHECK (result_fence IS NULL OR result_fence <= flight_fence)
);

COMMENT ON TABLE "${fenceGuardSchema}"."${fenceGuardTable}" IS
    'fence-guard singleflight: flight_fence is the newest flight begun for flight_key; result is kept until result_expires_at';
