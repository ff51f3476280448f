package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template on FencedWriter update, upsert and tombstone delete over real PostgreSQL. */
class SqlFencedResourceProperties extends FencedResourceProperties {

    private static final PgTestSupport PG = new PgTestSupport("sqlprops");
    private static final FencedTable TABLE;

    static {
        try {
            PG.exec("CREATE TABLE " + PG.q("resources") + " (id TEXT PRIMARY KEY, value TEXT, fence_token BIGINT, deleted BOOLEAN)");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        TABLE = FencedTable.builder(PG.schema.name(), "resources", "id", "fence_token")
                .withTombstoneColumn("deleted").withMetrics(LockMetrics.none()).build();
    }

    @AfterContainer
    static void dropSchema() {
        PG.close();
    }

    @Override
    protected void create(String id) throws Exception {
        PG.exec("INSERT INTO " + PG.q("resources") + " (id, value) VALUES ('" + id + "', '" + initialValue() + "')");
    }

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return TABLE.on(PG.ds).update(id, fence, Assignments.of("value", value));
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) {
        return TABLE.on(PG.ds).upsert(id, fence, Assignments.of("value", value));
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return TABLE.on(PG.ds).delete(id, fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }

    @Override
    protected Optional<String> read(String id) throws Exception {
        return Optional.ofNullable(PG.one("SELECT value FROM " + PG.q("resources") + " WHERE id = '" + id
                + "' AND deleted IS NOT TRUE"));
    }
}
