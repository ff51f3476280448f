package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.time.Duration;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs the samples of docs/postgresql.md on the embedded PostgreSQL (they use the public schema). */
class PostgresSamplesTest {

    private static DataSource dataSource;
    private static LockClient locks;

    @BeforeAll
    static void setUp() {
        dataSource = TestPostgres.embedded().dataSource();
        DSL.using(dataSource, SQLDialect.POSTGRES).execute("DROP TABLE IF EXISTS public.orders");
        DSL.using(dataSource, SQLDialect.POSTGRES).execute("CREATE TABLE public.orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, "
                + "items INT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        DSL.using(dataSource, SQLDialect.POSTGRES).execute("INSERT INTO public.orders (id, status, items) VALUES (42, 'new', 2)");
        locks = PostgresSamples.setUp(dataSource);
    }

    @Test
    void aFencedUpdateIsAppliedThenAnOlderFenceIsStale() throws Exception {
        Lease older = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        older.close();
        try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            assertThat(PostgresSamples.fencedWrite(dataSource, lease)).isInstanceOf(WriteOutcome.Applied.class);
        }
        assertThat(PostgresSamples.fencedWrite(dataSource, older)).isInstanceOf(WriteOutcome.Stale.class);
    }

    @Test
    void claimFirstAddsAnItemUnderTheLock() throws Exception {
        FencedTable orders = FencedTable.builder("public", "orders", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").build();
        int before = PostgresSamples.readItems(dataSource, 42L);
        PostgresSamples.claimFirst(locks, orders, dataSource);
        assertThat(PostgresSamples.readItems(dataSource, 42L)).isEqualTo(before + 1);
    }
}
