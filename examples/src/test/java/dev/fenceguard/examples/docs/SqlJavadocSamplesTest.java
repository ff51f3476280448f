package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Runs the Javadoc samples of fence-guard-jdbc, fence-guard-jooq and fence-guard-migrations on the embedded PostgreSQL. */
class SqlJavadocSamplesTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(5);

    private static DataSource dataSource;
    private static DSLContext sql;
    private static LockClient locks;
    private static SqlJavadocSamples samples;

    @BeforeAll
    static void setUp() {
        dataSource = EmbeddedOrders.dataSource();
        sql = DSL.using(dataSource, SQLDialect.POSTGRES);
        locks = EmbeddedOrders.locks(dataSource);
        samples = new SqlJavadocSamples(dataSource, EmbeddedOrders.orders());
    }

    @BeforeEach
    void newOrder() {
        EmbeddedOrders.setStatus(dataSource, "new");
    }

    @Test
    void fenceGuardJdbcMigratesLocksAndClosesItsEntry() throws Exception {
        samples.fenceGuardJdbc();
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("shipped");
        assertThat(locks.lookup("orders:42")).as("released").isEmpty();
    }

    @Test
    void typedAndNamedAssignmentsWriteTheSameColumns() throws Exception {
        OffsetDateTime now = OffsetDateTime.of(2026, 11, 26, 14, 0, 0, 0, ZoneOffset.UTC);
        List<Assignments> both = SqlJavadocSamples.assignments(now);
        FencedTable typed = FencedTable.builder(SqlJavadocSamples.ORDERS, SqlJavadocSamples.ORDERS.ID, SqlJavadocSamples.ORDERS.FENCE_TOKEN).build();
        for (Assignments a : both) {
            sql.execute("UPDATE public.orders SET paid_at = NULL WHERE id = 42");
            EmbeddedOrders.setStatus(dataSource, "new");
            locks.withLock("orders:42", TTL, WAIT, lease -> typed.on(dataSource).update(42L, lease.fence(), a).orThrow());
            assertThat(sql.fetchSingle("SELECT status || ' ' || to_char(paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') "
                    + "FROM public.orders WHERE id = 42").get(0, String.class)).isEqualTo("paid 2026-11-26 14:00");
        }
    }

    @Test
    void generatedAndPlainTablesWriteTheSameRow() throws Exception {
        List<FencedTable> tables;
        try (Lease lease = locks.acquire("orders:42", TTL, WAIT).orElseThrow()) {
            tables = SqlJavadocSamples.fencedTable(sql, lease);
            assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("paid");
            assertThat(EmbeddedOrders.fence(dataSource)).isEqualTo(lease.fence().value());
        }
        EmbeddedOrders.setStatus(dataSource, "new");
        FencedTable byName = tables.get(1);
        locks.withLock("orders:42", TTL, WAIT, lease -> byName.on(sql).update(42L, lease.fence(), Assignments.of("status", "named")).orThrow());
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("named");
    }

    @Test
    void warmUpChangesNoRow() {
        long fence = EmbeddedOrders.fence(dataSource);
        samples.warmUp();
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("new");
        assertThat(EmbeddedOrders.fence(dataSource)).isEqualTo(fence);
    }

    @Test
    void fenceColumnMigrationAddsTheColumnsAfterTheApplicationsOwnMigrations() {
        sql.execute("DROP TABLE IF EXISTS public.invoices");
        sql.execute("CREATE TABLE public.invoices (id BIGINT PRIMARY KEY, status TEXT NOT NULL)");
        sql.execute("INSERT INTO public.invoices VALUES (1, 'sent'), (2, 'new')");
        Flyway.configure().dataSource(dataSource).baselineVersion("6").load().baseline();   // the application's migrations 1 to 6
        try {
            SqlJavadocSamples.fenceColumnMigration(dataSource);
            assertThat(sql.fetch("SELECT id, status, fence_token, fence_deleted FROM public.invoices ORDER BY id").intoArrays())
                    .isDeepEqualTo(new Object[][] {{1L, "sent", 0L, false}, {2L, "new", 0L, false}});
            assertThat(sql.fetchSingle("SELECT max(version) FROM public.flyway_schema_history").get(0, String.class)).isEqualTo("7");
        } finally {
            sql.execute("DROP TABLE IF EXISTS public.invoices");
            sql.execute("DROP TABLE IF EXISTS public.flyway_schema_history");
        }
    }
}
