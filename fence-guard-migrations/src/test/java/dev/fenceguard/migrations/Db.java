package dev.fenceguard.migrations;

import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.List;

/** Tiny SQL helpers for the tests, on the test's own schema. */
final class Db {
    private Db() {}

    static List<String> rows(TestPostgres.Schema schema, String sql) {
        return schema.query(sql);
    }

    static String one(TestPostgres.Schema schema, String sql) {
        List<String> rows = schema.query(sql);
        return rows.isEmpty() ? null : rows.getFirst();
    }

    static void exec(TestPostgres.Schema schema, String sql) {
        schema.execute(sql);
    }
}
