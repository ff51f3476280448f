package dev.fenceguard.examples.docs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Purge;
import dev.fenceguard.spring.boot.autoconfigure.FencePurges;
import dev.fenceguard.testkit.servers.TestPostgres;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs the targets of the {@link PurgeConfig} samples on the embedded PostgreSQL: each purges its own table's old tombstones. */
class PurgeConfigTest {

    private static DataSource dataSource;
    private static DSLContext sql;

    @BeforeAll
    static void tables() {
        dataSource = TestPostgres.embedded().dataSource();
        sql = DSL.using(dataSource, SQLDialect.POSTGRES);
        for (String t : new String[] {"boot_purge_orders", "boot_purge_payments"}) {
            sql.execute("DROP TABLE IF EXISTS public." + t);
            sql.execute("CREATE TABLE public." + t + " (id BIGINT PRIMARY KEY, fence_token BIGINT NOT NULL DEFAULT 0, "
                    + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        }
    }

    private static void oldTombstoneAndLiveRow(String table) {
        sql.execute("INSERT INTO public." + table + " (id, fence_token, fence_deleted) VALUES (1, 1, TRUE), (2, 1, FALSE) ON CONFLICT DO NOTHING");
    }

    private static long rows(String table) {
        return sql.fetchSingle("SELECT count(*) FROM public." + table).get(0, Long.class);
    }

    @Test
    void theJavadocsTargetsPurgeBothTables() {
        oldTombstoneAndLiveRow("boot_purge_orders");
        oldTombstoneAndLiveRow("boot_purge_payments");
        FencePurges purges = new PurgeConfig.TwoTables().fencePurges(dataSource);
        assertThat(purges.targets()).containsOnlyKeys("orders", "payments");
        purges.targets().values().forEach(t -> assertThat(t.purge(Purge.ofDefaults()).complete()).isTrue());
        assertThat(rows("boot_purge_orders")).isOne();
        assertThat(rows("boot_purge_payments")).isOne();
    }

    @Test
    void theBootPagesTargetPurgesOrders() {
        oldTombstoneAndLiveRow("boot_purge_orders");
        FencePurges purges = new PurgeConfig.OneTable().orderPurges(dataSource);
        assertThat(purges.targets()).containsOnlyKeys("orders");
        assertThat(purges.targets().get("orders").purge(Purge.ofDefaults()).complete()).isTrue();
        assertThat(rows("boot_purge_orders")).isOne();
    }
}
