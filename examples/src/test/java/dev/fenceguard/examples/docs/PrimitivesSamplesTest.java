package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.servers.TestPostgres;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/** Runs the samples of docs/idempotency-store.md and docs/singleflight.md on the embedded PostgreSQL. */
class PrimitivesSamplesTest {

    private final DataSource dataSource = TestPostgres.embedded().dataSource();

    @Test
    void theChargeIsMadeOnceAndRecordedWithTheOrder() throws Exception {
        DSL.using(dataSource, SQLDialect.POSTGRES).execute("DROP TABLE IF EXISTS public.shop_orders");
        DSL.using(dataSource, SQLDialect.POSTGRES).execute("CREATE TABLE public.shop_orders (id TEXT PRIMARY KEY, status TEXT NOT NULL, "
                + "charge TEXT, fence_token BIGINT NOT NULL DEFAULT 0)");
        DSL.using(dataSource, SQLDialect.POSTGRES).execute("INSERT INTO public.shop_orders (id, status) VALUES ('o-7', 'new')");
        FencedTable orders = FencedTable.builder("public", "shop_orders", "id", "fence_token").build();
        LockClient locks = LockClient.of(new InMemoryLockBackend());
        PrimitivesSamples.Gateway gateway = new PrimitivesSamples.Gateway();

        PrimitivesSamples.payOrder(locks, dataSource, dataSource, orders, gateway, "o-7");
        PrimitivesSamples.payOrder(locks, dataSource, dataSource, orders, gateway, "o-7");   // a retry replays the charge

        assertThat(gateway.charges).hasSize(1);
        assertThat(DSL.using(dataSource, SQLDialect.POSTGRES).fetchSingle("SELECT status || ' ' || charge FROM public.shop_orders")
                .get(0, String.class)).isEqualTo("paid ch_1 (4200)");
    }

    @Test
    void theRatesAreComputedOnceAndThenAnsweredFromTheStore() throws Exception {
        SingleflightSamples.RateProvider provider = new SingleflightSamples.RateProvider();
        InMemoryLockBackend backend = new InMemoryLockBackend();
        assertThat(SingleflightSamples.rates(backend, dataSource, provider)).isEqualTo("EUR/USD 1.0842");
        assertThat(SingleflightSamples.rates(backend, dataSource, provider)).as("within the retention").isEqualTo("EUR/USD 1.0842");
        assertThat(provider.calls).hasValue(1);
    }
}
