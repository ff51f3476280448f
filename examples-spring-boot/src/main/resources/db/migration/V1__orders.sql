-- The service's own table. fence_token is the fence column fence-guard checks on every write; the
-- lock table itself is added to this Flyway run by the starter.
CREATE TABLE orders (
    id          TEXT        NOT NULL PRIMARY KEY,
    status      TEXT        NOT NULL,
    fence_token BIGINT      NOT NULL DEFAULT 0
);
