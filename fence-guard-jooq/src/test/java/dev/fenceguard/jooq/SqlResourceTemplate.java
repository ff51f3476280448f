package dev.fenceguard.jooq;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The fenced-resource template on FencedWriter update, upsert and tombstone delete of a table
 * {@code resources (id, value, fence_token, deleted)}, whatever the database: each subclass gives the
 * table, its pool and plain SQL on it.
 */
abstract class SqlResourceTemplate extends FencedResourceProperties {

    /** The fenced {@code resources} table, tombstone column {@code deleted}. */
    abstract FencedTable table();

    abstract DataSource ds();

    /** The table's qualified name, for plain SQL. */
    abstract String resources();

    abstract void exec(String sql) throws Exception;

    abstract String one(String sql) throws Exception;

    @Override
    protected void create(String id) throws Exception {
        exec("INSERT INTO " + resources() + " (id, value) VALUES ('" + id + "', '" + initialValue() + "')");
    }

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return table().on(ds()).update(id, fence, Assignments.of("value", value));
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) {
        return table().on(ds()).upsert(id, fence, Assignments.of("value", value));
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return table().on(ds()).delete(id, fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }

    @Override
    protected Optional<String> read(String id) throws Exception {
        return Optional.ofNullable(one("SELECT value FROM " + resources() + " WHERE id = '" + id + "' AND deleted IS NOT TRUE"));
    }
}
