package dev.fenceguard.jooq;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.PgErrors;
import dev.fenceguard.jdbc.internal.SqlCauses;
import dev.fenceguard.testkit.ZombieStorm;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/** Pieces shared by the SQL storms (PostgreSQL, MariaDB): a pool with bounded waits, a fenced counter, a storm. */
final class PgStorms {

    /** Lease TTL of the storms: a stalled holder blocks the lock for about this long. */
    static final Duration TTL = Duration.ofMillis(100);

    private PgStorms() {}

    /**
     * A pool whose every wait is bounded, so that a storm's calls end within its call timeout: 2 s for a
     * connection, 3 s to connect, 5 s per socket read.
     */
    static HikariDataSource pool(String jdbcUrl, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "connectTimeout=3&socketTimeout=5");
        config.setMaximumPoolSize(8);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(2_000);
        config.setValidationTimeout(1_000);
        config.setInitializationFailTimeout(-1);
        config.setPoolName("fg-storm-" + name);
        return new HikariDataSource(config);
    }

    /**
     * Creates {@code schema.table} with one counter row at 0 and returns it as the storm's resource: claim
     * and update through {@link FencedWriter}; the read is the test's own SQL, its errors mapped as
     * fence-guard maps them (a user's repository maps its own).
     */
    static ZombieStorm.FencedCounter counter(DataSource ds, String schema, String table) throws SQLException {
        return counter(ds, schema, table, PgErrors::map);
    }

    /** {@link #counter(DataSource, String, String)} on any database fenced writes support, its errors mapped by {@code errors}. */
    static ZombieStorm.FencedCounter counter(DataSource ds, String schema, String table, SqlCauses.Mapping errors) throws SQLException {
        String q = schema + "." + table;
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + q + " (id VARCHAR(20) PRIMARY KEY, n BIGINT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
            s.execute("INSERT INTO " + q + " (id, n) VALUES ('c', 0)");
        }
        FencedWriter counters = FencedTable.builder(schema, table, "id", "fence_token").withMetrics(LockMetrics.none()).build().on(ds);
        return new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return counters.claim("c", fence);
            }

            @Override
            public long read() {
                return PgStorms.read(ds, q, errors);
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return counters.update("c", fence, Assignments.of("n", value));
            }
        };
    }

    /** The counter's value in {@code table} (qualified), read by the test's own SQL, its errors mapped by {@code errors}. */
    static long read(DataSource ds, String table, SqlCauses.Mapping errors) {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT n FROM " + table + " WHERE id = 'c'");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw errors.map(e, table, "read");
        }
    }

    /** A storm of the given size on {@code backend} (fast retries: a free lock is taken at once). */
    static ZombieStorm.Builder storm(LockBackend backend, ZombieStorm.FencedCounter counter, int attempts) {
        LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(50)).build();
        return ZombieStorm.builder(locks, "counter:c", counter).withAttempts(attempts).withTtl(TTL)
                .withCallTimeout(Duration.ofSeconds(15));
    }
}
