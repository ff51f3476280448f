package dev.fenceguard.examples.docs;

import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import java.time.Duration;
import javax.sql.DataSource;

/** The purge samples of docs/postgresql.md and of {@link Purge}'s Javadoc. */
final class PurgeSamples {

    private PurgeSamples() {}

    static PurgeResult horizonAndPurge(DataSource dataSource) {
        // docs/postgresql.md: purge with a horizon (begin)
        FencedTable orders = FencedTable.builder("public", "orders", "id", "fence_token")
                .withKeyType(Long.class).withTombstoneColumn("fence_deleted")
                .withHorizon(Duration.ofDays(7))        // creating a key needs a fence above tick(now - 7 days)
                .build();                               // clock margin: 5 minutes unless withClockMargin
        PurgeResult purged = orders.on(dataSource)
                .purge(Purge.ofDefaults().withBatchSize(1_000).withMaxDuration(Duration.ofSeconds(10)));
        // docs/postgresql.md: purge with a horizon (end)
        return purged;
    }

    /** Purges {@code orders} in batches of 500, once more from where the first purge stopped if it did. */
    static void resume(FencedTable orders, DataSource dataSource) {
        // dev/fenceguard/core/Purge.java: resume (begin)
        PurgeResult first = orders.on(dataSource).purge(Purge.ofDefaults().withBatchSize(500));
        if (!first.complete()) {   // stopped at its time bound: go on from where it stopped
            orders.on(dataSource).purge(Purge.ofDefaults().withBatchSize(500).withStartAfter(first.resumeAfter().orElseThrow()));
        }
        // dev/fenceguard/core/Purge.java: resume (end)
    }
}
