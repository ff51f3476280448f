package dev.fenceguard.jooq;

import dev.fenceguard.jdbc.internal.PgErrors;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.migrations.FenceColumn;
import dev.fenceguard.migrations.TombstoneIndex;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm with a purge running beside it ({@link PurgeStorm}) on PostgreSQL, the counter's table
 * with the partial tombstone index docs/postgresql.md recommends. Size: 300 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak.
 */
class PostgresPurgeStormTest {

    private static final PgTestSupport PG = new PgTestSupport("purgestorm");

    @AfterAll
    static void dropSchema() {
        PG.close();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLostWhilePurgesRemoveTombstones() throws Exception {
        String schema = PG.schema.name();
        PurgeStorm.run(new PurgeStorm.Database("postgres", "postgres", PG, schema,
                table -> List.of(TombstoneIndex.on(FenceColumn.on(schema, table).withTombstoneColumn("fence_deleted"), "id").statement()),
                PgErrors::map, ago -> HorizonFixture.tickAgo(PG, ago)));
    }
}
