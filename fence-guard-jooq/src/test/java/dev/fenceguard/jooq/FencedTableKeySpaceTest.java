package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A fenced table can never be a lock table (issue 17, item 3), whatever the lock table is called. */
class FencedTableKeySpaceTest {

    private static final Duration TTL = Duration.ofMinutes(5);
    private static final List<String> LOCK_COLUMNS = List.of("lock_key", "fence", "lock_id", "expires_at", "acquired_at");
    private static PgTestSupport pg;
    private static LockBackend custom;
    private static LockBackend byDefaultName;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("keyspace");
        custom = pg.lockBackend("app_locks");
        byDefaultName = pg.lockBackend("fence_guard_locks");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    /** A held lock, and its row as text, to show nothing touched it. */
    private record Held(LockKey key, LockId id, long fence) {}

    private static Held hold(LockBackend async, String key) {
        dev.fenceguard.testkit.BlockingBackend backend = dev.fenceguard.testkit.BlockingBackend.of(async);
        LockKey k = LockKey.of(key);
        for (int i = 0; i < 2; i++) { // fence 2 after a release: a rewind would show
            LockId id = LockId.random();
            backend.tryAcquire(k, id, TTL).orElseThrow();
            backend.release(k, id);
        }
        LockId id = LockId.random();
        return new Held(k, id, backend.tryAcquire(k, id, TTL).orElseThrow().fence());
    }

    private static String row(String table, LockKey key) {
        return pg.one("SELECT fence || '|' || lock_id || '|' || expires_at FROM " + pg.q(table) + " WHERE lock_key = '" + key.value() + "'");
    }

    @Test
    void noFencedTableCanBeBuiltOnACustomNamedLockTable() {
        Held held = hold(custom, "orders");
        String before = row("app_locks", held.key());
        int refused = 0;
        for (String keyColumn : LOCK_COLUMNS) {
            for (String fenceColumn : LOCK_COLUMNS) {
                if (keyColumn.equals(fenceColumn)) {
                    continue;
                }
                for (FenceEncoding encoding : FenceEncoding.values()) {
                    FencedTable.Builder b = FencedTable.builder(pg.schema.name(), "app_locks", keyColumn, fenceColumn).withEncoding(encoding);
                    assertThatThrownBy(b::build).as("%s/%s %s", keyColumn, fenceColumn, encoding)
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock table");
                    refused++;
                }
            }
        }
        assertThat(refused).isEqualTo(40);
        // The same through jOOQ fields, as generated code would pass them.
        Table<?> t = DSL.table(DSL.name(pg.schema.name(), "app_locks"));
        Field<String> lockKey = DSL.field(DSL.name(pg.schema.name(), "app_locks", "lock_key"), SQLDataType.VARCHAR);
        Field<Long> fence = DSL.field(DSL.name(pg.schema.name(), "app_locks", "fence"), SQLDataType.BIGINT);
        assertThatThrownBy(() -> FencedTable.builder(t, lockKey, fence).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("column 'lock_key' of table 'app_locks' is named like a lock table's column [acquired_at, expires_at, "
                        + "lock_id, lock_key]; a fenced table must not be a fence-guard lock table, where a fenced write could take "
                        + "over a lock or reset its fence");

        assertThat(row("app_locks", held.key())).isEqualTo(before);
        assertThat(dev.fenceguard.testkit.BlockingBackend.of(custom).release(held.key(), held.id())).as("the holder still holds it").isTrue();
        assertThat(hold(custom, "orders").fence()).isEqualTo(held.fence() + 3);
    }

    @Test
    void theDefaultLockTableNameAndTheMigrationHistoryAreReserved() {
        assertThatThrownBy(() -> FencedTable.builder(pg.schema.name(), "fence_guard_locks", "id", "fence_token").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("one of fence-guard's own");
        assertThatThrownBy(() -> FencedTable.builder(pg.schema.name(), "fence_guard_history_app_locks", "installed_rank", "checksum")
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'fence_guard_' are reserved");
        assertThatThrownBy(() -> FencedTable.builder(DSL.table(DSL.name("FENCE_GUARD_LOCKS")), DSL.field("id"), DSL.field("fence")).build())
                .as("conservatively, in any case").isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLockTableWithAColumnAddedByTheUserIsStillRefusedThroughItsJooqFields() throws Exception {
        pg.exec("ALTER TABLE " + pg.q("app_locks") + " ADD COLUMN IF NOT EXISTS note TEXT UNIQUE");
        DSLContext dsl = DSL.using(pg.ds, SQLDialect.POSTGRES);
        Table<?> meta = dsl.meta().getTables("app_locks").stream()
                .filter(tb -> tb.getSchema() != null && tb.getSchema().getName().equals(pg.schema.name())).findFirst().orElseThrow();
        assertThatThrownBy(() -> FencedTable.builder(meta, meta.field("note"), meta.field("fence")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has the columns lock_key and lock_id");
        pg.exec("ALTER TABLE " + pg.q("app_locks") + " DROP COLUMN note");
    }

    @Test
    void theTombstoneColumnCannotBeALockColumnEither() {
        assertThatThrownBy(() -> FencedTable.builder(pg.schema.name(), "orders", "id", "fence_token").withTombstoneColumn("lock_id").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("column 'lock_id'");
    }

    @Test
    void userTablesWithLookalikeNamesStillWork() throws Exception {
        // "fence" as a fence column and "expires_at" as a data column are ordinary; only the key, fence and
        // tombstone columns are checked, so such a table is accepted and writes as usual.
        pg.exec("CREATE TABLE " + pg.q("sessions") + " (id TEXT PRIMARY KEY, expires_at TIMESTAMPTZ, fence BIGINT NOT NULL DEFAULT 0)");
        pg.exec("CREATE TABLE " + pg.q("my_fence_guard_locks") + " (id TEXT PRIMARY KEY, fence BIGINT NOT NULL DEFAULT 0)");
        FencedWriter sessions = FencedTable.builder(pg.schema.name(), "sessions", "id", "fence").withMetrics(LockMetrics.none())
                .build().on(pg.ds);
        assertThat(sessions.upsert("s1", FenceToken.of(3), Assignments.of("expires_at", OffsetDateTime.parse("2030-01-01T00:00Z")))).isInstanceOf(Applied.class);
        assertThat(sessions.upsert("s1", FenceToken.of(2), Assignments.of("expires_at", OffsetDateTime.parse("2030-01-01T00:00Z")))).isInstanceOf(Stale.class);
        FencedWriter mine = FencedTable.builder(pg.schema.name(), "my_fence_guard_locks", "id", "fence").withMetrics(LockMetrics.none())
                .build().on(pg.ds);
        assertThat(mine.claim("x", FenceToken.of(1))).as("runs; no row, no tombstone column").isInstanceOf(NotFound.class);
    }

    @Test
    void theDefaultNamedLockTableKeepsItsFencesToo() {
        Held held = hold(byDefaultName, "payments");
        String before = row("fence_guard_locks", held.key());
        assertThatThrownBy(() -> FencedTable.builder(pg.schema.name(), "fence_guard_locks", "lock_key", "fence").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(row("fence_guard_locks", held.key())).isEqualTo(before);
    }
}
