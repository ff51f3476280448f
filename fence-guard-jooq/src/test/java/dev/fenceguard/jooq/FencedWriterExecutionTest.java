package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.math.BigDecimal;
import java.sql.Connection;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.Converter;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.MappedTable;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.jooq.impl.EnumConverter;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How fenced statements run: rendered once, bound by the driver when the values are plain JDBC values
 * and by jOOQ when they need it (converters, JSONB), on the caller's connection, under the caller's
 * name mapping, with every error mapped.
 */
class FencedWriterExecutionTest {

    enum Status { NEW, PAID }

    record OrderId(long value) {}

    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("fwexec");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @BeforeEach
    void createTables() throws Exception {
        pg.exec("DROP TABLE IF EXISTS " + pg.q("typed") + ", " + pg.q("orders_a") + ", " + pg.q("orders_b"));
        pg.exec("CREATE TABLE " + pg.q("typed") + " (id BIGINT PRIMARY KEY, t TEXT, i INTEGER, n NUMERIC(10, 2), d DOUBLE PRECISION, "
                + "b BOOLEAN, u UUID, bytes BYTEA, day DATE, tod TIME, ts TIMESTAMP, tstz TIMESTAMPTZ, doc JSONB, status TEXT, "
                + "fence_token BIGINT NOT NULL DEFAULT 0, deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        for (String t : List.of("orders_a", "orders_b")) {
            pg.exec("CREATE TABLE " + pg.q(t) + " (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
            pg.exec("INSERT INTO " + pg.q(t) + " VALUES (1, 'new', 0)");
        }
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    /** A DSLContext on the pool that counts statements twice: as sent on the connection, and as jOOQ executes them. */
    private static DSLContext counted(AtomicInteger sent, AtomicInteger throughJooq, Settings settings) {
        return DSL.using(new DefaultConfiguration().set(pg.counting(sent)).set(SQLDialect.POSTGRES).set(settings).set(new ExecuteListener() {
            @Override
            public void executeStart(ExecuteContext ctx) {
                throughJooq.incrementAndGet();
            }
        }));
    }

    private FencedTable typed() {
        return FencedTable.builder(pg.schema.name(), "typed", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("deleted").withMetrics(LockMetrics.none()).build();
    }

    @Test
    void plainJdbcValuesAreBoundByTheDriverAndStoredAsJooqWouldStoreThem() {
        AtomicInteger sent = new AtomicInteger();
        AtomicInteger throughJooq = new AtomicInteger();
        FencedWriter w = typed().on(counted(sent, throughJooq, new Settings()));
        UUID uuid = UUID.fromString("0b7e8a53-5d0e-4f0c-9d4e-5a1f2b3c4d5e");
        Assignments values = Assignments.of(Map.ofEntries(Map.entry("t", "text ' \" ; --"), Map.entry("i", 42), Map.entry("n", new BigDecimal("12.34")),
                Map.entry("d", 2.5d), Map.entry("b", true), Map.entry("u", uuid), Map.entry("bytes", new byte[] {1, 2, (byte) 255}),
                Map.entry("day", LocalDate.of(2026, 2, 28)), Map.entry("tod", LocalTime.of(23, 59, 58, 123_456_000)),
                Map.entry("ts", LocalDateTime.of(2026, 2, 28, 23, 59, 58, 123_456_000)),
                Map.entry("tstz", OffsetDateTime.of(2026, 2, 28, 23, 59, 58, 0, ZoneOffset.ofHours(2)))));

        assertThat(w.upsert(7L, f(3), values)).isInstanceOf(Applied.class);
        assertThat(w.update(7L, f(3), Assignments.of("t", null).and("i", 43))).isInstanceOf(Applied.class);

        assertThat(sent.get()).as("one statement each").isEqualTo(2);
        assertThat(throughJooq.get()).as("neither ran through jOOQ's execution").isZero();
        assertThat(pg.one("SELECT coalesce(t, '<null>') || '|' || i || '|' || n || '|' || d || '|' || b || '|' || u || '|' || encode(bytes, 'hex')"
                + " || '|' || day || '|' || tod || '|' || ts || '|' || (tstz AT TIME ZONE 'UTC') || '|' || fence_token FROM " + pg.q("typed")))
                .isEqualTo("<null>|43|12.34|2.5|true|" + uuid + "|0102ff|2026-02-28|23:59:58.123456|2026-02-28 23:59:58.123456"
                        + "|2026-02-28 21:59:58|3");
    }

    @Test
    void valuesOnlyJooqCanBindRunThroughJooqOnTheSameConnection() throws Exception {
        Field<Status> status = DSL.field(DSL.name("status"), SQLDataType.VARCHAR.asConvertedDataType(new EnumConverter<>(String.class, Status.class)));
        Field<JSONB> doc = DSL.field(DSL.name("doc"), SQLDataType.JSONB);
        AtomicInteger sent = new AtomicInteger();
        AtomicInteger throughJooq = new AtomicInteger();
        DSLContext ctx = counted(sent, throughJooq, new Settings());

        ctx.transaction(cfg -> {
            FencedWriter w = typed().on(cfg.dsl());
            assertThat(w.upsert(8L, f(4), Assignments.of(status, Status.PAID).and(doc, JSONB.valueOf("{\"a\": [1, 2]}")))).isInstanceOf(Applied.class);
            assertThat(w.update(8L, f(3), Assignments.of(status, Status.NEW))).isInstanceOf(Stale.class);
        });

        assertThat(sent.get()).as("two writes, and the read that tells the second is stale").isEqualTo(3);
        assertThat(throughJooq.get()).as("the writes; the read binds only the key, which the driver binds itself").isEqualTo(2);
        assertThat(pg.one("SELECT status || '|' || (doc -> 'a' ->> 1) || '|' || fence_token FROM " + pg.q("typed") + " WHERE id = 8"))
                .isEqualTo("PAID|2|4");
    }

    @Test
    void keysOfAConvertedTypeAreReadBackInThatType() {
        Table<?> table = DSL.table(DSL.name(pg.schema.name(), "orders_a"));
        Field<OrderId> id = DSL.field(DSL.name(pg.schema.name(), "orders_a", "id"),
                SQLDataType.BIGINT.asConvertedDataType(Converter.ofNullable(Long.class, OrderId.class, OrderId::new, OrderId::value)));
        Field<Long> fence = DSL.field(DSL.name(pg.schema.name(), "orders_a", "fence_token"), SQLDataType.BIGINT);
        Field<String> status = DSL.field(DSL.name("status"), SQLDataType.VARCHAR);
        FencedWriter w = FencedTable.builder(table, id, fence).withMetrics(LockMetrics.none()).build().on(pg.ds);

        assertThat(w.update(new OrderId(1), f(5), Assignments.of(status, "paid"))).isInstanceOf(Applied.class);
        Map<Object, WriteOutcome> out = w.updateAll(List.of(new OrderId(1), new OrderId(2)), f(4), Assignments.of(status, "zombie"));

        assertThat(out.get(new OrderId(1))).isEqualTo(new Stale(pg.schema.name() + ".orders_a[id=OrderId[value=1]]", 4, 5,
                dev.fenceguard.core.FencePolicy.SAME_OR_NEWER));
        assertThat(out.get(new OrderId(2))).isInstanceOf(NotFound.class);
        assertThat(w.updateAll(List.of(new OrderId(1)), f(5), Assignments.of(status, "again")).get(new OrderId(1))).isInstanceOf(Applied.class);
    }

    @Test
    void manyKeysGoInFewShapesAndEachGetsItsOutcome() throws Exception {
        pg.exec("INSERT INTO " + pg.q("typed") + " (id, fence_token) SELECT g, CASE WHEN g IN (2, 4) THEN 9 ELSE 1 END FROM generate_series(1, 6) g");
        AtomicInteger sent = new AtomicInteger();
        FencedWriter w = typed().on(DSL.using(pg.counting(sent), SQLDialect.POSTGRES));

        Map<Object, WriteOutcome> out = w.updateAll(List.of(1L, 2L, 3L, 4L, 5L, 99L), f(5), Assignments.of("t", "bulk"));

        assertThat(out.keySet()).containsExactly(1L, 2L, 3L, 4L, 5L, 99L);
        assertThat(out.values().stream().map(o -> o.getClass().getSimpleName()))
                .containsExactly("Applied", "Stale", "Applied", "Stale", "Applied", "NotFound");
        assertThat(sent.get()).as("six keys padded to eight, three rejected padded to four: still two statements").isEqualTo(2);
        assertThat(pg.rows("SELECT id || ':' || coalesce(t, '-') || ':' || fence_token FROM " + pg.q("typed") + " ORDER BY id"))
                .containsExactly("1:bulk:5", "2:-:9", "3:bulk:5", "4:-:9", "5:bulk:5", "6:-:1");
    }

    @Test
    void aSchemaMappingOfTheCallersContextDecidesWhereWritesGo() throws Exception {
        FencedTable table = FencedTable.builder(pg.schema.name(), "orders_a", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build();
        DSLContext mapped = DSL.using(pg.ds, SQLDialect.POSTGRES, new Settings().withRenderMapping(new RenderMapping().withSchemata(
                new MappedSchema().withInput(pg.schema.name()).withTables(new MappedTable().withInput("orders_a").withOutput("orders_b")))));

        assertThat(table.on(mapped).update(1L, f(2), Assignments.of("status", "via mapping"))).isInstanceOf(Applied.class);
        assertThat(table.on(pg.ds).update(1L, f(3), Assignments.of("status", "direct"))).isInstanceOf(Applied.class);
        mapped.transaction(cfg -> assertThat(table.on(cfg.dsl()).update(1L, f(1), Assignments.of("status", "zombie")))
                .as("stale against orders_b's fence 2").isInstanceOf(Stale.class));

        assertThat(pg.one("SELECT status || ':' || fence_token FROM " + pg.q("orders_a"))).isEqualTo("direct:3");
        assertThat(pg.one("SELECT status || ':' || fence_token FROM " + pg.q("orders_b"))).isEqualTo("via mapping:2");
    }

    @Test
    void oneAssignmentsRemembersItsStatementPerTableRenderingAndOperation() throws Exception {
        FencedTable table = FencedTable.builder(pg.schema.name(), "orders_a", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build();
        DSLContext mapped = DSL.using(pg.ds, SQLDialect.POSTGRES, new Settings().withRenderMapping(new RenderMapping().withSchemata(
                new MappedSchema().withInput(pg.schema.name()).withTables(new MappedTable().withInput("orders_a").withOutput("orders_b")))));
        Assignments shared = Assignments.of("status", "shared");

        // The same instance through the default rendering, the mapped one, then the default one again, by both
        // operations: each write must run its own statement, not the one the instance last ran as.
        assertThat(table.on(pg.ds).update(1L, f(2), shared)).isInstanceOf(Applied.class);
        assertThat(table.on(mapped).update(1L, f(5), shared)).isInstanceOf(Applied.class);
        assertThat(table.on(pg.ds).upsert(2L, f(3), shared)).isInstanceOf(Applied.class);
        assertThat(table.on(mapped).upsert(2L, f(6), shared)).isInstanceOf(Applied.class);
        assertThat(table.on(pg.ds).update(1L, f(4), shared)).isInstanceOf(Applied.class);

        assertThat(pg.one("SELECT string_agg(id || ':' || status || ':' || fence_token, ',' ORDER BY id) FROM " + pg.q("orders_a")))
                .isEqualTo("1:shared:4,2:shared:3");
        assertThat(pg.one("SELECT string_agg(id || ':' || status || ':' || fence_token, ',' ORDER BY id) FROM " + pg.q("orders_b")))
                .isEqualTo("1:shared:5,2:shared:6");
    }

    @Test
    void oneAssignmentsSharedByThreadsWritingToTwoTablesWritesEachRowOnce() throws Exception {
        FencedWriter a = FencedTable.builder(pg.schema.name(), "orders_a", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build().on(pg.ds);
        FencedWriter b = FencedTable.builder(pg.schema.name(), "orders_b", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build().on(pg.ds);
        Assignments shared = Assignments.of("status", "shared");
        int threads = 4;
        int keys = 40;
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<List<WriteOutcome>>> futures = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    List<WriteOutcome> outcomes = new java.util.ArrayList<>();
                    for (int i = 0; i < keys; i++) {
                        // Threads alternate tables in opposite orders, so the instance's remembered statement keeps changing hands.
                        FencedWriter w = (i + thread) % 2 == 0 ? a : b;
                        long key = 100L + thread * keys + i;
                        outcomes.add(w.upsert(key, f(1), shared));
                        outcomes.add(w.update(key, f(2), shared));
                    }
                    return outcomes;
                }));
            }
            start.countDown();
            for (java.util.concurrent.Future<List<WriteOutcome>> future : futures) {
                assertThat(future.get()).hasSize(2 * keys).allSatisfy(o -> assertThat(o).isInstanceOf(Applied.class));
            }
        } finally {
            pool.shutdownNow();
        }

        // Each table holds exactly the keys written to it (its row 1 included), each at fence 2.
        int each = threads * keys / 2;
        for (String t : List.of("orders_a", "orders_b")) {
            assertThat(pg.one("SELECT count(*) || ':' || count(*) FILTER (WHERE status = 'shared' AND fence_token = 2) FROM " + pg.q(t)))
                    .as(t).isEqualTo((each + 1) + ":" + each);
        }
        assertThat(pg.one("SELECT count(*) FROM " + pg.q("orders_a") + " x JOIN " + pg.q("orders_b") + " y USING (id) WHERE x.id > 1"))
                .as("no key written to both tables").isEqualTo("0");
    }

    @Test
    void databaseErrorsAreFenceGuardExceptionsWhateverRanTheStatement() throws Exception {
        FencedTable missing = FencedTable.builder(pg.schema.name(), "no_such_table", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build();
        Assignments plain = Assignments.of("status", "x");
        Assignments jooqBound = Assignments.of(DSL.field(DSL.name("doc"), SQLDataType.JSONB), JSONB.valueOf("{}"));
        try (Connection c = pg.ds.getConnection()) {
            List<FencedWriter> writers = List.of(missing.on(pg.ds), missing.on(c), missing.on(DSL.using(pg.ds, SQLDialect.POSTGRES)));
            for (FencedWriter w : writers) {
                for (Assignments values : List.of(plain, jooqBound)) {
                    assertThatThrownBy(() -> w.update(1L, f(1), values)).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                        assertThat(e.getMessage()).contains("no_such_table[id=1]").contains("fenced update failed: SQLSTATE 42P01")
                                .contains("does the table exist?");
                    });
                }
            }
        }
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void aValueThatCannotTakeItsColumnsTypeIsRefusedBeforeAnySql() {
        AtomicInteger sent = new AtomicInteger();
        FencedWriter w = typed().on(DSL.using(pg.counting(sent), SQLDialect.POSTGRES));
        Field<Object> i = (Field) DSL.field(DSL.name("i"), SQLDataType.INTEGER);
        assertThatThrownBy(() -> w.update(1L, f(1), Assignments.of(i, "forty-two"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("value for column 'i' cannot be converted to the column's type java.lang.Integer");
        assertThat(sent.get()).isZero();
    }
}
