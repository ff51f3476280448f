package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.FencedResourceProperties;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.Optional;
import net.jqwik.api.lifecycle.AfterContainer;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * What a team adds to its own CI (docs/testing.md): the template, run against the team's own write
 * path. Here the "repository" is a fenced status update of an orders table.
 */
// docs/testing.md: your write path (begin)
class OrderRepositoryProperties extends FencedResourceProperties {
    static final TestPostgres.Schema SCHEMA = TestPostgres.server().newSchema("orderrepo");
    static final FencedTable ORDERS = FencedTable.builder(SCHEMA.name(), "orders", "id", "fence_token").build();
    static {
        SCHEMA.execute("CREATE TABLE " + SCHEMA.name() + ".orders (id TEXT PRIMARY KEY, status TEXT NOT NULL, "
                + "fence_token BIGINT NOT NULL DEFAULT 0)");
    }
    @Override protected void create(String id) {
        DSL.using(SCHEMA.dataSource(), SQLDialect.POSTGRES).execute("INSERT INTO orders (id, status) VALUES (?, ?)", id, initialValue());
    }
    @Override protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return ORDERS.on(SCHEMA.dataSource()).update(id, fence, Assignments.of("status", value));
    }
    @Override protected Optional<String> read(String id) {
        return DSL.using(SCHEMA.dataSource(), SQLDialect.POSTGRES)
                .fetchOptional("SELECT status FROM orders WHERE id = ?", id).map(r -> r.get(0, String.class));
    }
    @AfterContainer static void dropSchema() {
        SCHEMA.close();
    }
}
// docs/testing.md: your write path (end)
