package dev.fenceguard.examples.docs;

import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.FencePurgeProperties.FenceRecord;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * What the purge template's sample ({@link OrderPurgeProperties}) takes from its surroundings: a table of
 * orders on the embedded PostgreSQL with a tombstone column, fenced with a horizon of an hour, and the
 * few statements a user's test has at hand to read its clock and its rows.
 */
final class PurgeFixtures {

    private PurgeFixtures() {}

    /** On the pool of {@link ContractFixtures} (a new connection per call made this sample's run take 35 s of CI). */
    static final OrdersDb db = new OrdersDb(ContractFixtures.dataSource);

    static final FencedTable ORDERS = FencedTable.builder("public", "purge_props_orders", "id", "fence_token")
            .withTombstoneColumn("fence_deleted").withHorizon(Duration.ofHours(1)).build();

    /** The table's database: its clock, its rows, and a purge run to its end. */
    static final class OrdersDb {
        private final DataSource dataSource;
        private final DSLContext sql;

        OrdersDb(DataSource dataSource) {
            this.dataSource = dataSource;
            this.sql = DSL.using(dataSource, SQLDialect.POSTGRES);
            sql.execute("CREATE TABLE IF NOT EXISTS public.purge_props_orders (id TEXT PRIMARY KEY, status TEXT, "
                    + "fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        }

        DataSource dataSource() {
            return dataSource;
        }

        Instant clock() {
            return sql.fetchSingle("SELECT clock_timestamp()").get(0, OffsetDateTime.class).toInstant();
        }

        void purgeToTheEnd(FencedTable table) {
            PurgeResult r = table.on(dataSource).purge(Purge.ofDefaults().withBatchSize(2));
            while (!r.complete()) {
                r = table.on(dataSource).purge(Purge.ofDefaults().withBatchSize(2).withStartAfter(r.resumeAfter().orElseThrow()));
            }
        }

        Optional<FenceRecord> fenceRecord(String key) {
            return sql.fetchOptional("SELECT fence_token, fence_deleted FROM public.purge_props_orders WHERE id = ?", key)
                    .map(r -> new FenceRecord(r.get(0, Long.class), !r.get(1, Boolean.class)));
        }

        void insertDirectly(String key, FenceRecord r) {
            sql.execute("INSERT INTO public.purge_props_orders (id, status, fence_token, fence_deleted) VALUES (?, ?, ?, ?)",
                    key, r.live() ? "old" : null, r.fence(), !r.live());
        }
    }
}
