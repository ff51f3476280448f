-- An application's own first migration, as nearly every application has: the lock table's V1 must not clash with it.
CREATE TABLE app_orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0);
