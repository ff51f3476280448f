package dev.fenceguard.jooq;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.FencePurgeProperties;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The testkit's purge template on PostgreSQL: {@link FencedWriter#upsert}, {@code delete}, {@code claim}
 * and {@code purge} on a table with a horizon of an hour and the default clock margin, the store's clock
 * {@code clock_timestamp()}. Purges run in batches of 2, so a purge crosses several batches and resumes
 * from its cursor.
 */
class PostgresPurgeProperties extends FencePurgeProperties {

    private static final Duration HORIZON = Duration.ofHours(1);
    private static PgTestSupport pg;
    private static FencedTable items;
    private static String table;

    @BeforeContainer
    static void setUp() throws Exception {
        pg = new PgTestSupport("purgeprops");
        table = pg.q("purge_items");
        pg.exec("CREATE TABLE " + table + " (id TEXT PRIMARY KEY, body TEXT, fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        items = FencedTable.builder(pg.schema.name(), "purge_items", "id", "fence_token").withTombstoneColumn("fence_deleted")
                .withHorizon(HORIZON).withMetrics(LockMetrics.none()).build();
    }

    @AfterContainer
    static void tearDown() {
        pg.close();
    }

    @Override
    protected Duration horizon() {
        return HORIZON;
    }

    @Override
    protected Instant storeClock() throws Exception {
        try (Connection c = pg.ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT clock_timestamp()");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getObject(1, java.time.OffsetDateTime.class).toInstant();
        }
    }

    @Override
    protected WriteOutcome write(String key, FenceToken fence, Pause pause) {
        return items.on(pg.ds).upsert(key, fence, Assignments.of("body", "v" + fence.value()));
    }

    @Override
    protected WriteOutcome delete(String key, FenceToken fence, Pause pause) {
        return items.on(pg.ds).delete(key, fence);
    }

    @Override
    protected WriteOutcome claim(String key, FenceToken fence, Pause pause) {
        return items.on(pg.ds).claim(key, fence);
    }

    @Override
    protected void purge(Pause pause) {
        Purge purge = Purge.ofDefaults().withBatchSize(2);
        PurgeResult r = items.on(pg.ds).purge(purge);
        while (!r.complete()) {
            r = items.on(pg.ds).purge(purge.withStartAfter(r.resumeAfter().orElseThrow()));
        }
    }

    @Override
    protected Optional<FenceRecord> record(String key) throws Exception {
        try (Connection c = pg.ds.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT fence_token, fence_deleted FROM " + table + " WHERE id = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new FenceRecord(rs.getLong(1), !rs.getBoolean(2))) : Optional.empty();
            }
        }
    }

    @Override
    protected void plant(String key, FenceRecord record) throws Exception {
        try (Connection c = pg.ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + table + " (id, body, fence_token, fence_deleted) VALUES (?, ?, ?, ?)")) {
            ps.setString(1, key);
            ps.setString(2, record.live() ? "planted" : null);
            ps.setLong(3, record.fence());
            ps.setBoolean(4, !record.live());
            ps.executeUpdate();
        }
    }
}
