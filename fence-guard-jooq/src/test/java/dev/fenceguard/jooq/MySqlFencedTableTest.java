package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.jdbc.testing.CountingConnections;
import dev.fenceguard.jdbc.testing.CountingStatements;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link FencedTable} on MariaDB through both drivers and both ways of counting rows: MariaDB
 * Connector/J and MySQL Connector/J with their defaults (found rows), and MariaDB Connector/J with
 * {@code useAffectedRows=true} (changed rows: an update that changes nothing counts 0).
 */
class MySqlFencedTableTest {

    private static final MariaTestSupport MARIA = new MariaTestSupport("fenced");
    private static final MariaTestSupport CONNECTOR_J = new MariaTestSupport("fenced_cj", "mysql", "");
    private static final MariaTestSupport CHANGED_ROWS = new MariaTestSupport("fenced_chg", "mariadb", "useAffectedRows=true");
    private static final MariaTestSupport CONNECTOR_J_CHANGED_ROWS = new MariaTestSupport("fenced_cjchg", "mysql", "useAffectedRows=true");

    @AfterAll
    static void dropDatabases() {
        MARIA.close();
        CONNECTOR_J.close();
        CHANGED_ROWS.close();
        CONNECTOR_J_CHANGED_ROWS.close();
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MariaDbConnectorJFoundRows extends Writes {
        MariaDbConnectorJFoundRows() {
            super(MARIA);
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MySqlConnectorJFoundRows extends Writes {
        MySqlConnectorJFoundRows() {
            super(CONNECTOR_J);
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MariaDbConnectorJChangedRows extends Writes {
        MariaDbConnectorJChangedRows() {
            super(CHANGED_ROWS);
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MySqlConnectorJChangedRows extends Writes {
        MySqlConnectorJChangedRows() {
            super(CONNECTOR_J_CHANGED_ROWS);
        }
    }

    abstract static class Writes {
        final MariaTestSupport db;

        Writes(MariaTestSupport db) {
            this.db = db;
        }

        @BeforeEach
        void createTables() throws Exception {
            db.exec("DROP TABLE IF EXISTS " + db.q("orders") + ", " + db.q("notes") + ", " + db.q("notes_text") + ", " + db.q("gated"));
            // A legacy-style nullable fence column: NULL must count as 0. status has no default: tombstones need values.
            db.exec("CREATE TABLE " + db.q("orders") + " (id BIGINT PRIMARY KEY, status VARCHAR(40) NOT NULL, fence_token BIGINT, "
                    + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
            db.exec("INSERT INTO " + db.q("orders") + " (id, status) VALUES (1, 'new'), (2, 'new'), (3, 'new')");
            db.exec("CREATE TABLE " + db.q("notes") + " (id BIGINT PRIMARY KEY, body VARCHAR(40), fence_token BIGINT NOT NULL DEFAULT 0, "
                    + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
            db.exec("CREATE TABLE " + db.q("notes_text") + " (id BIGINT PRIMARY KEY, body VARCHAR(40), fence_token CHAR(15), "
                    + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        }

        FencedTable.Builder orders() {
            return FencedTable.builder(db.db.name(), "orders", "id", "fence_token").withKeyType(Long.class)
                    .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none());
        }

        FencedWriter notes(FencePolicy policy, FenceEncoding encoding) {
            return FencedTable.builder(db.db.name(), encoding == FenceEncoding.TEXT ? "notes_text" : "notes", "id", "fence_token")
                    .withKeyType(Long.class).withEncoding(encoding).withPolicy(policy).withTombstoneColumn("fence_deleted")
                    .withMetrics(LockMetrics.none()).build().on(db.ds);
        }

        String row(String table, long id) {
            return db.one("SELECT CONCAT_WS('|', " + (table.equals("orders") ? "status" : "COALESCE(body, '-')")
                    + ", COALESCE(CAST(fence_token AS UNSIGNED), 0), fence_deleted) FROM " + db.q(table) + " WHERE id = " + id);
        }

        String resource(String table, long id) {
            return db.db.name() + "." + table + "[id=" + id + "]";
        }

        @Test
        void repeatingAWriteThatChangesNothingIsStillAppliedAndOlderLeasesAreStale() throws Exception {
            FencedWriter w = orders().build().on(db.ds);
            assertThat(w.update(1L, f(3), status("paid"))).isEqualTo(new Applied(resource("orders", 1), 3));
            assertThat(w.update(1L, f(3), status("paid"))).as("same values, same fence: 0 changed rows, still applied")
                    .isEqualTo(new Applied(resource("orders", 1), 3));
            assertThat(w.claim(1L, f(3))).as("a claim with the fence the row holds changes nothing, applied").isInstanceOf(Applied.class);
            assertThat(w.update(1L, f(2), status("zombie"))).isEqualTo(new Stale(resource("orders", 1), 2, 3, FencePolicy.SAME_OR_NEWER));
            assertThat(w.update(42L, f(9), status("x"))).isEqualTo(new NotFound(resource("orders", 42)));
            assertThat(row("orders", 1)).isEqualTo("paid|3|0");
        }

        @Test
        void upsertInsertsReplacesAndTellsAStaleWriteWithItsCurrentFenceInOneStatement() {
            AtomicInteger statements = new AtomicInteger();
            FencedWriter w = orders().build().on(DSL.using(CountingStatements.of(db.ds, statements), SQLDialect.MARIADB));
            assertThat(w.upsert(10L, f(5), status("created"))).isInstanceOf(Applied.class);
            assertThat(w.upsert(10L, f(5), status("created"))).as("same values again").isInstanceOf(Applied.class);
            assertThat(w.upsert(10L, f(4), status("zombie"))).isEqualTo(new Stale(resource("orders", 10), 4, 5, FencePolicy.SAME_OR_NEWER));
            assertThat(w.upsert(10L, f(6), status("replaced"))).isInstanceOf(Applied.class);
            assertThat(w.upsert(1L, f(1), status("over a NULL fence"))).as("NULL counts as 0").isInstanceOf(Applied.class);
            // MySQL Connector/J gives no generated key for a count of 0: with changed rows, an upsert that left the row as
            // it was (the same values again, the stale one) reads the session's LAST_INSERT_ID() in a second statement.
            assertThat(statements).as("one statement per upsert, stale included").hasValue(db == CONNECTOR_J_CHANGED_ROWS ? 7 : 5);
            assertThat(row("orders", 10)).isEqualTo("replaced|6|0");
            assertThat(row("orders", 1)).isEqualTo("over a NULL fence|1|0");
        }

        @Test
        void upsertJudgesEveryColumnByTheStoredFenceBecauseTheFenceIsAssignedLast() throws Exception {
            // STRICTLY_NEWER shows the order: once the fence column holds the new fence, "stored < presented" is false.
            FencedWriter w = notes(FencePolicy.STRICTLY_NEWER, FenceEncoding.INTEGER);
            w.upsert(1L, f(3), Assignments.of("body", "first")).orThrow();
            assertThat(w.upsert(1L, f(4), Assignments.of("body", "second"))).isInstanceOf(Applied.class);
            assertThat(row("notes", 1)).as("data and fence both written").isEqualTo("second|4|0");

            // The same guarded statement with the fence assigned first: MySQL evaluates left to right, so the
            // body's guard already sees fence 5 and keeps the old body. This is the bug the order avoids.
            db.exec("INSERT INTO " + db.q("notes") + " (id, body, fence_token) VALUES (1, 'third', 5) ON DUPLICATE KEY UPDATE "
                    + "fence_token = IF(fence_token < 5, 5, fence_token), body = IF(fence_token < 5, 'third', body)");
            assertThat(row("notes", 1)).isEqualTo("second|5|0");
        }

        @Test
        void deleteOfAnAbsentKeyLeavesATombstoneThatRefusesOlderWrites() {
            for (FenceEncoding encoding : FenceEncoding.values()) {
                FencedWriter w = notes(FencePolicy.SAME_OR_NEWER, encoding);
                String table = encoding == FenceEncoding.TEXT ? "notes_text" : "notes";
                assertThat(w.delete(7L, f(5))).isEqualTo(new Applied(resource(table, 7), 5));
                assertThat(w.delete(7L, f(5))).as("again, changing nothing").isInstanceOf(Applied.class);
                assertThat(w.upsert(7L, f(4), Assignments.of("body", "zombie"))).isEqualTo(new Stale(resource(table, 7), 4, 5, FencePolicy.SAME_OR_NEWER));
                assertThat(w.update(7L, f(4), Assignments.of("body", "zombie"))).isInstanceOf(Stale.class);
                assertThat(w.claim(7L, f(4))).isInstanceOf(Stale.class);
                assertThat(w.delete(7L, f(4))).isInstanceOf(Stale.class);
                assertThat(w.update(7L, f(6), Assignments.of("body", "x"))).as("an update writes no tombstone").isInstanceOf(NotFound.class);
                assertThat(w.claim(7L, f(6))).as("a claim raises the tombstone").isInstanceOf(NotFound.class);
                assertThat(w.claim(7L, f(6))).as("again, changing nothing").isInstanceOf(NotFound.class);
                assertThat(w.upsert(7L, f(5), Assignments.of("body", "zombie"))).isInstanceOf(Stale.class);
                assertThat(w.upsert(7L, f(6), Assignments.of("body", "back"))).isInstanceOf(Applied.class);
                assertThat(row(table, 7)).isEqualTo("back|6|0");
                assertThat(w.claim(8L, f(2))).as("a claim of a key never seen").isInstanceOf(NotFound.class);
                assertThat(w.upsert(8L, f(1), Assignments.of("body", "zombie"))).isInstanceOf(Stale.class);
                assertThat(row(table, 8)).isEqualTo("-|2|1");
            }
        }

        @Test
        void tombstoneRowsOfTablesWithRequiredColumnsNameTheColumnAndTakePlaceholders() throws Exception {
            FencedWriter w = orders().build().on(db.ds);
            assertThatThrownBy(() -> w.delete(99L, f(5))).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                assertThat(e.getMessage()).contains(resource("orders", 99)).contains("column \"status\"")
                        .contains("delete(key, fence, Assignments.of(\"status\", ...))");
            });
            assertThat(w.delete(99L, f(5), status("(deleted)"))).isInstanceOf(Applied.class);
            assertThat(row("orders", 99)).isEqualTo("(deleted)|5|1");
            w.update(1L, f(5), status("paid")).orThrow();
            assertThat(w.delete(1L, f(4))).as("a stale delete of an existing row never tries the insert").isInstanceOf(Stale.class);
            assertThat(w.delete(1L, f(6), status("unused"))).isInstanceOf(Applied.class);
            assertThat(row("orders", 1)).isEqualTo("paid|6|1");
        }

        @Test
        void updateAllReportsEachKey() throws Exception {
            FencedWriter w = orders().build().on(db.ds);
            w.update(2L, f(9), status("newer")).orThrow();
            w.delete(3L, f(1)).orThrow();
            w.update(1L, f(3), status("bulk")).orThrow(); // already as the bulk write leaves it
            Map<Object, WriteOutcome> out = w.updateAll(List.of(1L, 2L, 3L, 4L, 1L), f(3), status("bulk"));
            assertThat(out).containsOnlyKeys(1L, 2L, 3L, 4L);
            assertThat(out.get(1L)).isInstanceOf(Applied.class);
            assertThat(out.get(2L)).isEqualTo(new Stale(resource("orders", 2), 3, 9, FencePolicy.SAME_OR_NEWER));
            assertThat(out.get(3L)).isInstanceOf(NotFound.class);
            assertThat(out.get(4L)).isInstanceOf(NotFound.class);
        }

        @Test
        void concurrentDeleteOfAbsentKeyAndStaleUpsertAlwaysEndDeletedUnderTheNewerFence() throws Exception {
            // The delete of an absent key takes three statements here (update, read, insert if absent): a stale
            // upsert that inserts the row in between must still end deleted under fence 5.
            FencedTable table = FencedTable.builder(db.db.name(), "notes", "id", "fence_token").withKeyType(Long.class)
                    .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
            int rounds = 40;
            CyclicBarrier start = new CyclicBarrier(2);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Future<List<WriteOutcome>> deletes = pool.submit(() -> each(rounds, start, id -> table.on(db.ds).delete(id, f(5))));
                Future<List<WriteOutcome>> zombies = pool.submit(() -> each(rounds, start,
                        id -> table.on(db.ds).upsert(id, f(4), Assignments.of("body", "zombie"))));
                assertThat(deletes.get(2, TimeUnit.MINUTES)).allMatch(Applied.class::isInstance);
                assertThat(zombies.get(2, TimeUnit.MINUTES)).allMatch(o -> o instanceof Applied || o instanceof Stale);
            } finally {
                pool.shutdownNow();
            }
            assertThat(db.rows("SELECT DISTINCT CONCAT(fence_token, ':', fence_deleted) FROM " + db.q("notes"))).containsExactly("5:1");
            assertThat(db.one("SELECT COUNT(*) FROM " + db.q("notes"))).isEqualTo(String.valueOf(rounds));
        }

        private static List<WriteOutcome> each(int rounds, CyclicBarrier start, java.util.function.LongFunction<WriteOutcome> write)
                throws Exception {
            List<WriteOutcome> out = new java.util.ArrayList<>();
            for (long id = 100; id < 100 + rounds; id++) {
                start.await(1, TimeUnit.MINUTES);
                out.add(write.apply(id));
            }
            return out;
        }

        @Test
        void anUpdateThatMatchedNothingIsNotAppliedWhenASameFenceUpsertCreatesTheRowBeforeItsRead() {
            // Seed 1776514895666284697 of MariaDbFencedResourceProperties, ordered: W2's UPDATE of the absent key
            // matches nothing, then W1's upsert with the same fence commits, then W2 reads the row W1 wrote.
            FencedTable table = FencedTable.builder(db.db.name(), "notes", "id", "fence_token").withKeyType(Long.class)
                    .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
            AtomicInteger statements = new AtomicInteger();
            Runnable upsertInBetween = () -> assertThat(table.on(db.ds).upsert(50L, f(5), Assignments.of("body", "w1")))
                    .isInstanceOf(Applied.class);
            FencedWriter w2 = table.on(BeforeSecondStatement.of(db.ds, statements, upsertInBetween));
            assertThat(w2.update(50L, f(5), Assignments.of("body", "w2"))).as("the UPDATE ran before the row existed")
                    .isEqualTo(new NotFound(resource("notes", 50)));
            assertThat(statements).as("the UPDATE and the read after it").hasValue(2);
            assertThat(row("notes", 50)).isEqualTo("w1|5|0");
            // The same with a claim: its UPDATE missed, the key is no longer absent, so it tries again and is applied.
            Runnable upsertBeforeClaim = () -> table.on(db.ds).upsert(51L, f(5), Assignments.of("body", "w1")).orThrow();
            assertThat(table.on(BeforeSecondStatement.of(db.ds, new AtomicInteger(), upsertBeforeClaim)).claim(51L, f(5)))
                    .isInstanceOf(Applied.class);
            assertThat(row("notes", 51)).isEqualTo("w1|5|0");
        }

        @Test
        void aMarkLeftOnTheConnectionByAnEarlierWriteIsNotReadAsTheNextOnes() throws Exception {
            FencedTable table = FencedTable.builder(db.db.name(), "notes", "id", "fence_token").withKeyType(Long.class)
                    .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
            try (Connection c = db.ds.getConnection()) {
                FencedWriter w = table.on(c);
                w.upsert(60L, f(5), Assignments.of("body", "same")).orThrow();
                assertThat(w.update(60L, f(5), Assignments.of("body", "same"))).as("matched, changing nothing").isInstanceOf(Applied.class);
                assertThat(w.update(61L, f(5), Assignments.of("body", "same"))).as("next, on the same connection: no row")
                        .isEqualTo(new NotFound(resource("notes", 61)));
                assertThat(w.upsert(60L, f(4), Assignments.of("body", "zombie"))).isInstanceOf(Stale.class);
                assertThat(w.update(61L, f(5), Assignments.of("body", "same"))).as("after a stale upsert's report")
                        .isEqualTo(new NotFound(resource("notes", 61)));
                assertThat(w.claim(60L, f(5))).as("a claim changing nothing").isInstanceOf(Applied.class);
                assertThat(w.updateAll(List.of(61L, 60L, 62L), f(5), Assignments.of("body", "same")))
                        .containsEntry(61L, new NotFound(resource("notes", 61))).containsEntry(60L, new Applied(resource("notes", 60), 5))
                        .containsEntry(62L, new NotFound(resource("notes", 62)));
            }
            assertThat(row("notes", 61)).isNull();
        }

        @Test
        void twoDeletesOfOneAbsentKeyHeldAtTheInsertBothApplyWithoutADeadlock() throws Exception {
            // Both deletes find no row and insert the tombstone. A trigger holds each insert at a gate (a user lock the
            // test holds) until both have arrived, then lets them on together: an INSERT .. SELECT .. WHERE NOT EXISTS
            // would hold a shared gap lock by then in each, and each insert would wait for the other's (1213).
            db.exec("CREATE TABLE " + db.q("gated") + " (id BIGINT PRIMARY KEY, body VARCHAR(40), fence_token BIGINT NOT NULL DEFAULT 0, "
                    + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
            String gate = db.db.name() + "_gate";
            db.exec("CREATE TRIGGER " + db.q("gated_gate") + " BEFORE INSERT ON " + db.q("gated") + " FOR EACH ROW BEGIN "
                    + "SET @fg_gate = GET_LOCK('" + gate + "', 300); SET @fg_gate = RELEASE_LOCK('" + gate + "'); END");
            FencedTable table = FencedTable.builder(db.db.name(), "gated", "id", "fence_token").withKeyType(Long.class)
                    .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try (Connection holder = db.ds.getConnection(); java.sql.Statement s = holder.createStatement()) {
                try (java.sql.ResultSet rs = s.executeQuery("SELECT GET_LOCK('" + gate + "', 60)")) {
                    assertThat(rs.next() && rs.getInt(1) == 1).as("the test holds the gate").isTrue();
                }
                Future<WriteOutcome> first = pool.submit(() -> table.on(db.ds).delete(9L, f(5)));
                Future<WriteOutcome> second = pool.submit(() -> table.on(db.ds).delete(9L, f(5)));
                // Both inserts wait at the gate: the server lists two sessions waiting for the user lock. (The bound only
                // keeps a broken test from hanging the build; nothing here depends on how long the wait takes.)
                String waiting = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'User lock' AND INFO LIKE '%" + gate + "%'";
                long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
                while (!"2".equals(db.one(waiting))) {
                    assertThat(first.isDone() || second.isDone()).as("a delete ended before reaching the gate").isFalse();
                    assertThat(System.nanoTime()).as("both deletes reached the gate").isLessThan(giveUp);
                }
                try (java.sql.ResultSet rs = s.executeQuery("SELECT RELEASE_LOCK('" + gate + "')")) {
                    rs.next();
                }
                assertThat(first.get(2, TimeUnit.MINUTES)).isEqualTo(new Applied(resource("gated", 9), 5));
                assertThat(second.get(2, TimeUnit.MINUTES)).isEqualTo(new Applied(resource("gated", 9), 5));
            } finally {
                pool.shutdownNow();
            }
            assertThat(row("gated", 9)).isEqualTo("-|5|1");
        }

        @Test
        void writesJoinTheCallersTransaction() throws Exception {
            FencedTable table = orders().build();
            try (Connection c = db.ds.getConnection()) {
                c.setAutoCommit(false);
                assertThat(table.on(c).update(1L, f(4), status("in tx"))).isInstanceOf(Applied.class);
                assertThat(table.on(c).upsert(1L, f(3), status("zombie"))).as("sees its own write").isInstanceOf(Stale.class);
                c.rollback();
            }
            assertThat(row("orders", 1)).isEqualTo("new|0|0");
        }
    }

    @Test
    void theDialectIsTakenFromTheDslContextAndOthersAreRefusedBeforeAnyIo() {
        FencedTable table = FencedTable.builder("app", "orders", "id", "fence_token").build();
        assertThatThrownBy(() -> table.on(DSL.using(SQLDialect.SQLITE)))
                .as("a SQLite context, no connection: refused by its dialect alone").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("POSTGRES, MYSQL or MARIADB").hasMessageContaining("SQLITE");
        assertThatThrownBy(() -> table.on(DSL.using(SQLDialect.MARIADB)).update(null, f(1), status("x")))
                .as("a null key, on a context without a connection: refused before any SQL").isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> table.on(DSL.using(SQLDialect.MYSQL)).update(1L, f(1), Assignments.of("fence_token", 3L)))
                .as("assigning the fence column").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not set the key, fence or tombstone");
    }

    @Test
    void invalidArgumentsFailBeforeTheDataSourceIsAskedForAConnection() throws Exception {
        MARIA.exec("CREATE TABLE IF NOT EXISTS " + MARIA.q("io_orders") + " (id BIGINT PRIMARY KEY, status VARCHAR(40), fence_token BIGINT, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        FencedTable table = FencedTable.builder(MARIA.db.name(), "io_orders", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
        FencedTable noTombstone = FencedTable.builder(MARIA.db.name(), "io_orders", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build();
        AtomicInteger connections = new AtomicInteger();
        javax.sql.DataSource counted = CountingConnections.of(MARIA.ds, connections);
        FencedWriter w = table.on(counted);
        assertThat(connections).as("connections taken by on(dataSource)").hasValue(0);
        assertThatThrownBy(() -> w.update(null, f(1), status("x"))).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> w.update("not a number", f(1), status("x"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> w.upsert(1L, null, status("x"))).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> w.upsert(1L, f(1), Assignments.of("fence_token", 3L))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> w.claim(1L, f(1), Assignments.of("id", 3L))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> w.delete(1L, f(1), null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> w.updateAll(List.of(), f(1), status("x"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> w.warmUp(Assignments.of("fence_deleted", true))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> noTombstone.on(counted).delete(1L, f(1))).isInstanceOf(IllegalStateException.class);
        assertThat(connections).as("connections taken for invalid arguments").hasValue(0);
        assertThat(w.update(424242L, f(1), status("x"))).isInstanceOf(NotFound.class);
        assertThat(connections).as("a valid write: one to learn the database, one for the write").hasValue(2);
        assertThat(table.on(counted).update(424242L, f(1), status("x"))).isInstanceOf(NotFound.class);
        assertThat(connections).as("the database is learnt once per data source").hasValue(3);
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    private static Assignments status(String s) {
        return Assignments.of("status", s);
    }
}
