package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The fenced-resource template on FencedWriter update, upsert and tombstone delete over real MariaDB,
 * through MySQL Connector/J with its default found-row counts (the storm covers changed-row counts).
 */
class MariaDbFencedResourceProperties extends FencedResourceProperties {

    private static final MariaTestSupport MARIA = new MariaTestSupport("sqlprops", "mysql", "");
    private static final FencedTable TABLE;

    static {
        try {
            MARIA.exec("CREATE TABLE " + MARIA.q("resources") + " (id VARCHAR(100) PRIMARY KEY, value TEXT, fence_token BIGINT, deleted BOOLEAN)");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        TABLE = FencedTable.builder(MARIA.db.name(), "resources", "id", "fence_token")
                .withTombstoneColumn("deleted").withMetrics(LockMetrics.none()).build();
    }

    @AfterContainer
    static void dropDatabase() {
        MARIA.close();
    }

    @Override
    protected void create(String id) throws Exception {
        MARIA.exec("INSERT INTO " + MARIA.q("resources") + " (id, value) VALUES ('" + id + "', '" + initialValue() + "')");
    }

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return TABLE.on(MARIA.ds).update(id, fence, Assignments.of("value", value));
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) {
        return TABLE.on(MARIA.ds).upsert(id, fence, Assignments.of("value", value));
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return TABLE.on(MARIA.ds).delete(id, fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }

    @Override
    protected Optional<String> read(String id) throws Exception {
        return Optional.ofNullable(MARIA.one("SELECT value FROM " + MARIA.q("resources") + " WHERE id = '" + id
                + "' AND deleted IS NOT TRUE"));
    }
}
