package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.time.Duration;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs the purge samples on the embedded PostgreSQL: tombstones far older than the horizon go, the rest stays. */
class PurgeSamplesTest {

    private static DataSource dataSource;
    private static DSLContext sql;

    @BeforeAll
    static void setUp() {
        dataSource = TestPostgres.embedded().dataSource();
        sql = DSL.using(dataSource, SQLDialect.POSTGRES);
        sql.execute("CREATE TABLE IF NOT EXISTS public.orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, "
                + "items INT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        sql.execute("DROP TABLE IF EXISTS public.purge_orders");
        sql.execute("CREATE TABLE public.purge_orders (id BIGINT PRIMARY KEY, fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
    }

    private static int count(String query) {
        return sql.fetchSingle(query).get(0, Integer.class);
    }

    @Test
    void thePostgresSamplePurgesATombstoneOlderThanTheHorizonAndKeepsLiveRows() {
        sql.execute("INSERT INTO public.orders (id, status, fence_token, fence_deleted) VALUES (9001, 'gone', 1, TRUE), "
                + "(9002, 'kept', 1, FALSE) ON CONFLICT (id) DO NOTHING");
        try {
            assertThat(PurgeSamples.horizonAndPurge(dataSource).removed()).isGreaterThanOrEqualTo(1);
            assertThat(count("SELECT count(*) FROM public.orders WHERE id = 9001")).isZero();
            assertThat(count("SELECT count(*) FROM public.orders WHERE id = 9002")).isOne();
        } finally {
            sql.execute("DELETE FROM public.orders WHERE id IN (9001, 9002)");
        }
    }

    @Test
    void theResumeSamplePurgesEveryOldTombstone() {
        sql.execute("INSERT INTO public.purge_orders (id, fence_token, fence_deleted) SELECT g, 1, TRUE FROM generate_series(1, 1200) g");
        FencedTable orders = FencedTable.builder("public", "purge_orders", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withHorizon(Duration.ofDays(7)).build();
        PurgeSamples.resume(orders, dataSource);
        assertThat(count("SELECT count(*) FROM public.purge_orders")).isZero();
    }
}
