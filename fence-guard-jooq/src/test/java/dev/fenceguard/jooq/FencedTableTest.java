package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FencedTableTest {

    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("fenced");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    private String orders;
    private String ordersText;
    private String notes;
    private String notesText;

    @BeforeEach
    void createTables() throws Exception {
        orders = pg.q("orders");
        ordersText = pg.q("orders_text");
        pg.exec("DROP TABLE IF EXISTS " + orders + ", " + ordersText);
        // A legacy-style nullable fence column: NULL must count as 0.
        pg.exec("CREATE TABLE " + orders + " (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        pg.exec("INSERT INTO " + orders + " (id, status) VALUES (1, 'new'), (2, 'new'), (3, 'new')");
        pg.exec("CREATE TABLE " + ordersText + " (id TEXT PRIMARY KEY, status TEXT NOT NULL, fence_token CHAR(15), "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        pg.exec("INSERT INTO " + ordersText + " (id, status) VALUES ('a', 'new')");
        // Tables whose other columns have defaults or allow NULL: a tombstone row needs no placeholder values.
        notes = pg.q("notes");
        notesText = pg.q("notes_text");
        pg.exec("DROP TABLE IF EXISTS " + notes + ", " + notesText);
        pg.exec("CREATE TABLE " + notes + " (id BIGINT PRIMARY KEY, body TEXT, fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        pg.exec("CREATE TABLE " + notesText + " (id BIGINT PRIMARY KEY, body TEXT, fence_token CHAR(15), "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
    }

    /** A writer on {@code notes} (BIGINT fences) or {@code notes_text} (CHAR(15) fences). */
    private FencedWriter notesWriter(FencePolicy policy, FenceEncoding encoding, DSLContext on) {
        return FencedTable.builder(pg.schema.name(), encoding == FenceEncoding.TEXT ? "notes_text" : "notes", "id", "fence_token")
                .withKeyType(Long.class).withEncoding(encoding).withPolicy(policy).withTombstoneColumn("fence_deleted")
                .withMetrics(LockMetrics.none()).build().on(on);
    }

    /** {@code body|fence|deleted} of a note, the fence decoded from either encoding; null if no row. */
    private String note(FenceEncoding encoding, long id) {
        return pg.one("SELECT coalesce(body, '-') || '|' || coalesce(fence_token::text::bigint, 0) || '|' || fence_deleted FROM "
                + (encoding == FenceEncoding.TEXT ? notesText : notes) + " WHERE id = " + id);
    }

    private FencedTable.Builder table() {
        return FencedTable.builder(pg.schema.name(), "orders", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none());
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    private static Assignments status(String s) {
        return Assignments.of("status", s);
    }

    private String row(long id) throws Exception {
        return pg.one("SELECT status, fence_token, fence_deleted FROM " + orders + " WHERE id = " + id);
    }

    @Test
    void sameOrNewerAppliesRepeatWritesOfOneLeaseAndRejectsOlderLeases() throws Exception {
        FencedWriter w = table().build().on(pg.ds);
        assertThat(w.update(1L, f(3), status("paid"))).isEqualTo(new Applied(pg.schema.name() + ".orders[id=1]", 3));
        assertThat(w.update(1L, f(3), status("shipped"))).as("same lease, second write").isInstanceOf(Applied.class);
        assertThat(w.update(1L, f(2), status("zombie")))
                .isEqualTo(new Stale(pg.schema.name() + ".orders[id=1]", 2, 3, FencePolicy.SAME_OR_NEWER));
        assertThat(row(1)).isEqualTo("shipped|3|f");
    }

    @Test
    void strictlyNewerLetsEachLeaseWriteOnce() throws Exception {
        FencedWriter w = table().withPolicy(FencePolicy.STRICTLY_NEWER).build().on(pg.ds);
        assertThat(w.update(1L, f(3), status("charged"))).isInstanceOf(Applied.class);
        assertThat(w.update(1L, f(3), status("charged again"))).isInstanceOfSatisfying(Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(3));
        assertThat(w.update(1L, f(4), status("next lease"))).isInstanceOf(Applied.class);
        assertThat(row(1)).isEqualTo("next lease|4|f");
    }

    @Test
    void updatesOfMissingRowsAreNotFoundAndRecordNothing() throws Exception {
        FencedWriter w = table().build().on(pg.ds);
        assertThat(w.update(99L, f(1), status("x"))).isEqualTo(new NotFound(pg.schema.name() + ".orders[id=99]"));
        assertThat(w.updateAll(List.of(98L, 99L), f(1), status("x")).values()).allMatch(NotFound.class::isInstance);
        assertThat(pg.one("SELECT count(*) FROM " + orders)).isEqualTo("3");
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("policiesAndEncodings")
    void deleteOfAbsentKeyThenStaleCreateIsStale(FencePolicy policy, FenceEncoding encoding) {
        AtomicInteger statements = new AtomicInteger();
        FencedWriter w = notesWriter(policy, encoding, counting(statements));
        String resource = pg.schema.name() + (encoding == FenceEncoding.TEXT ? ".notes_text" : ".notes") + "[id=7]";
        assertThat(w.delete(7L, f(5))).isEqualTo(new Applied(resource, 5));
        assertThat(statements.getAndSet(0)).as("the UPDATE found no row; one more statement left the tombstone").isEqualTo(2);
        assertThat(note(encoding, 7)).isEqualTo("-|5|true");

        assertThat(w.upsert(7L, f(4), Assignments.of("body", "zombie"))).isEqualTo(new Stale(resource, 4, 5, policy));
        assertThat(w.update(7L, f(4), Assignments.of("body", "zombie"))).isInstanceOf(Stale.class);
        assertThat(w.claim(7L, f(4))).isInstanceOf(Stale.class);
        assertThat(w.delete(7L, f(4))).isInstanceOf(Stale.class);
        assertThat(note(encoding, 7)).as("still deleted, still fence 5").isEqualTo("-|5|true");
        assertThat(w.update(7L, f(6), Assignments.of("body", "x"))).as("an update does not write tombstones").isInstanceOf(NotFound.class);
        assertThat(note(encoding, 7)).isEqualTo("-|5|true");

        WriteOutcome sameFence = w.upsert(7L, f(5), Assignments.of("body", "by lease 5"));
        if (policy == FencePolicy.SAME_OR_NEWER) {
            assertThat(sameFence).isInstanceOf(Applied.class);
            assertThat(note(encoding, 7)).isEqualTo("by lease 5|5|false");
        } else {
            assertThat(sameFence).isEqualTo(new Stale(resource, 5, 5, policy));
            assertThat(w.upsert(7L, f(6), Assignments.of("body", "by lease 6"))).isInstanceOf(Applied.class);
            assertThat(note(encoding, 7)).isEqualTo("by lease 6|6|false");
        }
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("policiesAndEncodings")
    void claimOfAbsentKeyThenStaleCreateIsStale(FencePolicy policy, FenceEncoding encoding) {
        AtomicInteger statements = new AtomicInteger();
        FencedWriter w = notesWriter(policy, encoding, counting(statements));
        String resource = pg.schema.name() + (encoding == FenceEncoding.TEXT ? ".notes_text" : ".notes") + "[id=8]";
        assertThat(w.claim(8L, f(5))).as("no row to claim, but the fence is recorded").isEqualTo(new NotFound(resource));
        assertThat(statements.getAndSet(0)).isEqualTo(2);
        assertThat(note(encoding, 8)).isEqualTo("-|5|true");
        assertThat(w.upsert(8L, f(4), Assignments.of("body", "zombie"))).isEqualTo(new Stale(resource, 4, 5, policy));
        assertThat(note(encoding, 8)).isEqualTo("-|5|true");

        assertThat(w.claim(8L, f(6))).as("a newer claim raises the tombstone").isInstanceOf(NotFound.class);
        assertThat(w.upsert(8L, f(5), Assignments.of("body", "zombie of lease 5"))).isEqualTo(new Stale(resource, 5, 6, policy));
        assertThat(w.claim(8L, f(6))).isEqualTo(policy == FencePolicy.SAME_OR_NEWER ? new NotFound(resource) : new Stale(resource, 6, 6, policy));
        assertThat(note(encoding, 8)).isEqualTo("-|6|true");

        assertThat(w.upsert(8L, f(7), Assignments.of("body", "created"))).isInstanceOf(Applied.class);
        assertThat(w.claim(8L, f(8))).as("claim of a live row").isEqualTo(new Applied(resource, 8));
        assertThat(note(encoding, 8)).isEqualTo("created|8|false");
        assertThat(w.upsert(8L, f(7), Assignments.of("body", "zombie"))).isInstanceOf(Stale.class);
    }

    static Stream<Arguments> policiesAndEncodings() {
        return Stream.of(FencePolicy.values()).flatMap(p -> Stream.of(FenceEncoding.values()).map(e -> Arguments.of(p, e)));
    }

    @Test
    void tombstoneRowsOfTablesWithRequiredColumnsTakePlaceholderValues() throws Exception {
        FencedWriter w = table().build().on(pg.ds);
        String resource = pg.schema.name() + ".orders[id=99]";
        assertThatThrownBy(() -> w.delete(99L, f(5))).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains(resource).contains("column \"status\"").contains("SQLSTATE 23502")
                    .contains("give column \"status\" a default or allow NULL")
                    .contains("delete(key, fence, Assignments.of(\"status\", ...))");
            assertThat(printed(e)).as("names the column, never quotes the row").doesNotContain("Failing row").doesNotContain("(99,");
        });
        assertThatThrownBy(() -> w.claim(99L, f(5))).isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.getMessage()).contains("claim(key, fence, Assignments.of(\"status\", ...))"));
        assertThat(pg.one("SELECT count(*) FROM " + orders)).as("nothing written").isEqualTo("3");

        assertThat(w.delete(99L, f(5), status("(deleted)"))).isEqualTo(new Applied(resource, 5));
        assertThat(row(99)).isEqualTo("(deleted)|5|t");
        assertThat(w.upsert(99L, f(4), status("zombie"))).isInstanceOf(Stale.class);
        assertThat(w.claim(98L, f(5), status("(claimed)"))).isInstanceOf(NotFound.class);
        assertThat(row(98)).isEqualTo("(claimed)|5|t");
        assertThat(w.upsert(98L, f(4), status("zombie"))).isInstanceOf(Stale.class);

        w.update(1L, f(5), status("paid")).orThrow();
        assertThat(w.delete(1L, f(4))).as("a stale delete of an existing row never tries the insert").isInstanceOf(Stale.class);
        assertThat(w.claim(1L, f(4), status("unused"))).isInstanceOf(Stale.class);
        assertThat(w.delete(1L, f(6), status("unused"))).as("placeholders never touch an existing row").isInstanceOf(Applied.class);
        assertThat(row(1)).isEqualTo("paid|6|t");
        assertThatThrownBy(() -> w.delete(5L, f(1), Assignments.of("fence_deleted", false)))
                .hasMessageContaining("must not set the key, fence or tombstone");
    }

    @Test
    void withoutATombstoneColumnAClaimOfAnAbsentKeyRecordsNothing() throws Exception {
        FencedWriter w = FencedTable.builder(pg.schema.name(), "notes", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build().on(pg.ds);
        assertThat(w.claim(9L, f(5))).isInstanceOf(NotFound.class);
        assertThat(pg.one("SELECT count(*) FROM " + notes)).isEqualTo("0");
        assertThat(w.upsert(9L, f(4), Assignments.of("body", "documented limit"))).isInstanceOf(Applied.class);
        assertThatThrownBy(() -> w.claim(9L, f(5), Assignments.of("body", "x"))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs a tombstone column");
        assertThatThrownBy(() -> w.delete(9L, f(5), Assignments.of("body", "x"))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void deleteOfAbsentKeyJoinsTheCallersTransaction() throws Exception {
        FencedTable table = FencedTable.builder(pg.schema.name(), "notes", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
        DSLContext dsl = DSL.using(pg.ds, SQLDialect.POSTGRES);
        assertThatThrownBy(() -> dsl.transaction(cfg -> {
            table.on(cfg.dsl()).delete(11L, f(5)).orThrow();
            table.on(cfg.dsl()).claim(12L, f(5));
            throw new IllegalStateException("business rule failed after the delete");
        })).hasMessageContaining("business rule failed");
        assertThat(pg.one("SELECT count(*) FROM " + notes)).as("rolled back with the caller").isEqualTo("0");
        try (Connection c = pg.ds.getConnection()) {
            c.setAutoCommit(false);
            assertThat(table.on(c).delete(11L, f(5))).isInstanceOf(Applied.class);
            assertThat(table.on(c).upsert(11L, f(4), Assignments.of("body", "zombie"))).as("sees its own tombstone").isInstanceOf(Stale.class);
            c.commit();
            c.setAutoCommit(true);
        }
        assertThat(note(FenceEncoding.INTEGER, 11)).isEqualTo("-|5|true");
    }

    @Test
    void concurrentDeleteOfAbsentKeyAndStaleUpsertAlwaysEndDeletedUnderTheNewerFence() throws Exception {
        FencedTable table = FencedTable.builder(pg.schema.name(), "notes", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
        int rounds = 40;
        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<List<WriteOutcome>> deletes = pool.submit(() -> {
                List<WriteOutcome> out = new ArrayList<>();
                for (long id = 100; id < 100 + rounds; id++) {
                    start.await(1, TimeUnit.MINUTES);
                    out.add(table.on(pg.ds).delete(id, f(5)));
                }
                return out;
            });
            Future<List<WriteOutcome>> zombies = pool.submit(() -> {
                List<WriteOutcome> out = new ArrayList<>();
                for (long id = 100; id < 100 + rounds; id++) {
                    start.await(1, TimeUnit.MINUTES);
                    out.add(table.on(pg.ds).upsert(id, f(4), Assignments.of("body", "zombie")));
                }
                return out;
            });
            assertThat(deletes.get(2, TimeUnit.MINUTES)).allMatch(Applied.class::isInstance);
            assertThat(zombies.get(2, TimeUnit.MINUTES)).allMatch(o -> o instanceof Applied || o instanceof Stale);
        } finally {
            pool.shutdownNow();
        }
        assertThat(pg.rows("SELECT DISTINCT fence_token || ':' || fence_deleted FROM " + notes)).containsExactly("5:true");
        assertThat(pg.one("SELECT count(*) FROM " + notes)).isEqualTo(String.valueOf(rounds));
    }

    @Test
    void upsertInsertsReplacesWithNewerAndRejectsStale() throws Exception {
        FencedWriter w = table().build().on(pg.ds);
        assertThat(w.upsert(10L, f(5), status("created"))).isInstanceOf(Applied.class);
        assertThat(row(10)).isEqualTo("created|5|f");
        assertThat(w.upsert(10L, f(4), status("zombie"))).isInstanceOfSatisfying(Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(5));
        assertThat(w.upsert(10L, f(6), status("replaced"))).isInstanceOf(Applied.class);
        assertThat(row(10)).isEqualTo("replaced|6|f");
        assertThat(w.upsert(1L, f(1), status("over null fence"))).as("NULL counts as 0").isInstanceOf(Applied.class);
    }

    @Test
    void deletesKeepATombstoneSoStaleUpsertsCannotResurrectTheRow() throws Exception {
        FencedWriter w = table().build().on(pg.ds);
        w.update(2L, f(5), status("paid")).orThrow();
        assertThat(w.delete(2L, f(4))).as("an older lease cannot delete").isInstanceOf(Stale.class);
        assertThat(w.delete(2L, f(6))).isInstanceOf(Applied.class);
        assertThat(row(2)).isEqualTo("paid|6|t");
        assertThat(w.upsert(2L, f(5), status("zombie resurrection"))).isInstanceOfSatisfying(Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(6));
        assertThat(w.update(2L, f(5), status("zombie update"))).isInstanceOf(Stale.class);
        assertThat(w.update(2L, f(7), status("update of a deleted row"))).isInstanceOf(NotFound.class);
        assertThat(w.delete(2L, f(8))).as("re-delete raises the tombstone fence").isInstanceOf(Applied.class);
        assertThat(w.upsert(2L, f(7), status("zombie of lease 7"))).isInstanceOf(Stale.class);
        assertThat(row(2)).isEqualTo("paid|8|t");
        assertThat(w.upsert(2L, f(9), status("recreated"))).isInstanceOf(Applied.class);
        assertThat(row(2)).isEqualTo("recreated|9|f");
        assertThat(pg.rows("SELECT id FROM " + orders + " WHERE id = 2 AND NOT fence_deleted")).containsExactly("2");
    }

    @Test
    void deleteWithoutATombstoneColumnIsRefused() {
        FencedWriter w = FencedTable.builder(pg.schema.name(), "orders", "id", "fence_token").withKeyType(Long.class).build().on(pg.ds);
        assertThatThrownBy(() -> w.delete(1L, f(1))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs a tombstone column");
    }

    @Test
    void updateAllReportsAnOutcomePerRowInOneStatement() throws Exception {
        FencedWriter w = table().build().on(pg.ds);
        w.update(2L, f(5), status("newer")).orThrow();
        w.delete(3L, f(1)).orThrow();
        AtomicInteger statements = new AtomicInteger();
        Map<Object, WriteOutcome> out = table().build().on(counting(statements)).updateAll(List.of(1L, 2L, 3L, 4L, 1L), f(3), status("bulk"));
        assertThat(out.keySet()).containsExactly(1L, 2L, 3L, 4L);
        assertThat(out.get(1L)).isInstanceOf(Applied.class);
        assertThat(out.get(2L)).isInstanceOfSatisfying(Stale.class, s -> assertThat(s.currentFence()).isEqualTo(5));
        assertThat(out.get(3L)).as("tombstoned under an older fence").isInstanceOf(NotFound.class);
        assertThat(out.get(4L)).isInstanceOf(NotFound.class);
        assertThat(statements.get()).as("one UPDATE plus one SELECT for the rejected rows").isEqualTo(2);
        assertThat(pg.rows("SELECT id || ':' || status FROM " + orders + " ORDER BY id")).containsExactly("1:bulk", "2:newer", "3:new");
    }

    @Test
    void successTakesOneStatementAndOnlyRejectionTakesTwo() {
        AtomicInteger statements = new AtomicInteger();
        FencedWriter w = table().build().on(counting(statements));
        w.update(1L, f(2), status("a")).orThrow();
        assertThat(statements.getAndSet(0)).isEqualTo(1);
        w.upsert(20L, f(2), status("a")).orThrow();
        assertThat(statements.getAndSet(0)).isEqualTo(1);
        w.delete(20L, f(2)).orThrow();
        assertThat(statements.getAndSet(0)).isEqualTo(1);
        assertThat(w.delete(20L, f(1))).isInstanceOf(Stale.class);
        assertThat(statements.getAndSet(0)).as("a stale delete reads the row in its second statement").isEqualTo(2);
        w.delete(21L, f(2), status("(deleted)")).orThrow();
        assertThat(statements.getAndSet(0)).as("delete of a key never seen").isEqualTo(2);
        assertThat(w.update(1L, f(1), status("stale"))).isInstanceOf(Stale.class);
        assertThat(statements.getAndSet(0)).isEqualTo(2);
    }

    @Test
    void textFencesInCharColumnsFollowTheSameRule() throws Exception {
        FencedWriter w = FencedTable.builder(pg.schema.name(), "orders_text", "id", "fence_token")
                .withEncoding(FenceEncoding.TEXT).withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build().on(pg.ds);
        assertThat(w.update("a", f(42), status("paid"))).as("NULL counts as 0").isInstanceOf(Applied.class);
        assertThat(pg.one("SELECT fence_token FROM " + ordersText)).isEqualTo("000000000000042");
        assertThat(w.update("a", f(9), status("zombie"))).as("9 < 42 although '9' > '4' as text")
                .isEqualTo(new Stale(pg.schema.name() + ".orders_text[id=a]", 9, 42, FencePolicy.SAME_OR_NEWER));
        assertThat(w.update("a", f(100), status("newer"))).isInstanceOf(Applied.class);
        assertThat(w.upsert("b", f(7), status("new row"))).isInstanceOf(Applied.class);
        assertThat(w.delete("a", f(50))).isInstanceOf(Stale.class);
        assertThat(w.delete("a", f(100))).isInstanceOf(Applied.class);
        assertThat(pg.rows("SELECT id || ':' || status || ':' || fence_token || ':' || fence_deleted FROM " + ordersText + " ORDER BY id"))
                .containsExactly("a:newer:000000000000100:true", "b:new row:000000000000007:false");
    }

    @Test
    void jooqFieldsWorkLikeGeneratedCode() throws Exception {
        Table<?> t = DSL.table(DSL.name(pg.schema.name(), "orders"));
        Field<Long> id = DSL.field(DSL.name(pg.schema.name(), "orders", "id"), SQLDataType.BIGINT);
        Field<String> st = DSL.field(DSL.name(pg.schema.name(), "orders", "status"), SQLDataType.VARCHAR);
        Field<Long> fence = DSL.field(DSL.name(pg.schema.name(), "orders", "fence_token"), SQLDataType.BIGINT);
        FencedTable table = FencedTable.builder(t, id, fence).withMetrics(LockMetrics.none()).build();
        DSLContext dsl = DSL.using(pg.ds, SQLDialect.POSTGRES);
        assertThat(table.on(dsl).update(1, f(4), Assignments.of(st, "via jOOQ"))).as("Integer key converted to BIGINT").isInstanceOf(Applied.class);
        // The Condition is there for statements users build themselves.
        int rows = dsl.update(t).set(st, "custom").set(fence, 4L).where(id.eq(1L)).and(table.admits(f(4))).execute();
        assertThat(rows).isEqualTo(1);
        assertThat(dsl.update(t).set(st, "custom zombie").where(id.eq(1L)).and(table.admits(f(3))).execute()).isZero();
        assertThat(row(1)).isEqualTo("custom|4|f");
    }

    @Test
    void writesJoinTheCallersTransactionAndRollBackWithIt() throws Exception {
        FencedTable table = table().build();
        try (Connection c = pg.ds.getConnection()) {
            c.setAutoCommit(false);
            assertThat(table.on(c).update(1L, f(5), status("uncommitted"))).isInstanceOf(Applied.class);
            assertThat(row(1)).as("invisible to others before commit").isEqualTo("new|null|f");
            c.rollback();
            c.setAutoCommit(true);
        }
        assertThat(row(1)).isEqualTo("new|null|f");

        DSLContext dsl = DSL.using(pg.ds, SQLDialect.POSTGRES);
        assertThatThrownBy(() -> dsl.transaction(cfg -> {
            table.on(cfg.dsl()).update(1L, f(5), status("in jOOQ tx")).orThrow();
            throw new IllegalStateException("business rule failed after the write");
        })).hasMessageContaining("business rule failed");
        assertThat(row(1)).isEqualTo("new|null|f");
        dsl.transaction(cfg -> table.on(cfg.dsl()).update(1L, f(5), status("committed")).orThrow());
        assertThat(row(1)).isEqualTo("committed|5|f");
    }

    @Test
    void staleOutcomeThrowsANamedException() {
        FencedWriter w = table().build().on(pg.ds);
        w.update(1L, f(8), status("b")).orThrow();
        assertThatThrownBy(() -> w.update(1L, f(7), status("a")).orThrow()).isInstanceOfSatisfying(StaleFenceException.class, e -> {
            assertThat(e.presentedFence()).isEqualTo(7);
            assertThat(e.currentFence()).isEqualTo(8);
            assertThat(e.getMessage()).contains("orders[id=1]").contains("presented fence 7").contains("holds fence 8");
        });
    }

    @Test
    void badInputFailsBeforeAnySqlAndWritesNothing() throws Exception {
        AtomicInteger statements = new AtomicInteger();
        FencedWriter w = table().build().on(counting(statements));
        String schema = pg.schema.name();
        for (String bad : List.of("orders\"; DROP TABLE x; --", "a;b", "x--", "ünïcödé", "x".repeat(10_000), "a\0b", "")) {
            assertThatThrownBy(() -> FencedTable.builder(schema, bad, "id", "fence_token")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> FencedTable.builder(schema, "orders", bad, "fence_token")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> FencedTable.builder(schema, "orders", "id", bad)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> FencedTable.builder(bad, "orders", "id", "fence_token")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> table().withTombstoneColumn(bad)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Assignments.of(bad, "v")).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> FencedTable.builder(schema, "orders", "id", "id")).hasMessageContaining("must differ");
        assertThatThrownBy(() -> w.update(1L, f(1), Assignments.of("fence_token", 99L))).hasMessageContaining("must not set the key, fence or tombstone");
        assertThatThrownBy(() -> w.update(1L, f(1), Assignments.of("id", 7L))).hasMessageContaining("must not set the key");
        assertThatThrownBy(() -> w.update(1L, f(1), Assignments.of("status", "nul\0inside"))).hasMessageContaining("NUL");
        assertThatThrownBy(() -> w.update("not a number", f(1), status("x"))).hasMessageContaining("cannot be converted");
        assertThatThrownBy(() -> w.updateAll(List.of(), f(1), status("x"))).hasMessage("updateAll needs at least one key");
        FencedWriter text = FencedTable.builder(schema, "orders_text", "id", "fence_token").withEncoding(FenceEncoding.TEXT).build().on(pg.ds);
        assertThatThrownBy(() -> text.upsert("k\0", f(1), status("x"))).hasMessageContaining("NUL");
        assertThatThrownBy(() -> text.upsert("k\uDC00", f(1), status("x"))).hasMessageContaining("unpaired surrogate");
        assertThat(statements.get()).as("no statement reached the server").isZero();
        assertThat(pg.rows("SELECT id || ':' || status FROM " + orders + " ORDER BY id")).containsExactly("1:new", "2:new", "3:new");
        // Hostile text in a key is only a value: bound, never rendered.
        assertThat(text.upsert("'; DROP TABLE orders; --", f(1), status("x"))).isInstanceOf(Applied.class);
        assertThat(text.update("k".repeat(10_000), f(1), status("x"))).isInstanceOf(NotFound.class);
    }

    private static String printed(Throwable t) {
        java.io.StringWriter out = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(out));
        return out.toString();
    }

    /** A DSLContext over the pool that counts the statements sent on its connections. */
    private static DSLContext counting(AtomicInteger counter) {
        return DSL.using(pg.counting(counter), SQLDialect.POSTGRES);
    }
}
