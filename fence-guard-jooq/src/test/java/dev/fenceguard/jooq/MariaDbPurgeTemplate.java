package dev.fenceguard.jooq;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.FencePurgeProperties;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * The testkit's purge template on MariaDB, through the driver and row counts of a subclass's database:
 * {@link FencedWriter#upsert}, {@code delete}, {@code claim} and {@code purge} on a table with a horizon of an
 * hour and the default clock margin, the server's clock read as the statements read it (UTC microseconds).
 * Purges run in batches of 2, so a purge crosses several batches and resumes from its cursor; between batches,
 * where it holds no row lock, it lets the template schedule a write.
 */
abstract class MariaDbPurgeTemplate extends FencePurgeProperties {

    static final Duration HORIZON = Duration.ofHours(1);

    /** The subclass's database (a static fixture of the subclass, closed in its {@code @AfterContainer}). */
    abstract MariaTestSupport maria();

    /** The subclass's table, made by {@link #itemsTable}. */
    abstract FencedTable items();

    /** Creates the items table in {@code maria}'s database, with the purge index; the fenced table over it. */
    static FencedTable itemsTable(MariaTestSupport maria) {
        try {
            maria.exec("CREATE TABLE " + maria.q("purge_items") + " (id VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin PRIMARY KEY, "
                    + "body VARCHAR(64), fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE, "
                    + "INDEX fg_tombstones (fence_deleted, id, fence_token)) ENGINE=InnoDB");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return FencedTable.builder(maria.db.name(), "purge_items", "id", "fence_token").withTombstoneColumn("fence_deleted")
                .withHorizon(HORIZON).withMetrics(LockMetrics.none()).build();
    }

    @Override
    protected Duration horizon() {
        return HORIZON;
    }

    @Override
    protected Instant storeClock() throws Exception {
        long micros = Long.parseLong(maria().one("SELECT TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', UTC_TIMESTAMP(6))"));
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }

    @Override
    protected WriteOutcome write(String key, FenceToken fence, Pause pause) {
        return items().on(maria().ds).upsert(key, fence, Assignments.of("body", "v" + fence.value()));
    }

    @Override
    protected WriteOutcome delete(String key, FenceToken fence, Pause pause) {
        return items().on(maria().ds).delete(key, fence);
    }

    @Override
    protected WriteOutcome claim(String key, FenceToken fence, Pause pause) {
        return items().on(maria().ds).claim(key, fence);
    }

    @Override
    protected void purge(Pause pause) {
        Purge purge = Purge.ofDefaults().withBatchSize(2);
        PurgeResult r = items().on(maria().ds).purge(purge);
        while (!r.complete()) {
            pause.pause(); // between batches: each batch commits, so no row lock is held here
            r = items().on(maria().ds).purge(purge.withStartAfter(r.resumeAfter().orElseThrow()));
        }
    }

    @Override
    protected Optional<FenceRecord> record(String key) throws Exception {
        try (Connection c = maria().ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT fence_token, fence_deleted FROM " + maria().q("purge_items") + " WHERE id = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new FenceRecord(rs.getLong(1), !rs.getBoolean(2))) : Optional.empty();
            }
        }
    }

    @Override
    protected void plant(String key, FenceRecord record) throws Exception {
        try (Connection c = maria().ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + maria().q("purge_items") + " (id, body, fence_token, fence_deleted) VALUES (?, ?, ?, ?)")) {
            ps.setString(1, key);
            ps.setString(2, record.live() ? "planted" : null);
            ps.setLong(3, record.fence());
            ps.setBoolean(4, !record.live());
            ps.executeUpdate();
        }
    }
}
