package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A table of items with a tombstone column, fenced with a horizon, and the database clock's floor for
 * tests of docs/fence-lifecycle.md. Fences are built from the database's clock (never the JVM's), so
 * "below the horizon" means what the statements mean by it.
 */
final class HorizonFixture implements HorizonStore {

    static final Duration H = Duration.ofHours(1);
    /** Ticks (10 µs) per minute. */
    static final long MINUTE = 60L * 1000 * ClockFloor.PER_MILLISECOND;

    final PgTestSupport pg;
    final String table;
    final FencedTable items;
    final Purges purges = new Purges();

    HorizonFixture(PgTestSupport pg, String name, Duration clockMargin) throws SQLException {
        this.pg = pg;
        this.table = pg.q(name);
        pg.exec("DROP TABLE IF EXISTS " + table);
        pg.exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, body TEXT, fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        this.items = FencedTable.builder(pg.schema.name(), name, "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withHorizon(H).withClockMargin(clockMargin).withMetrics(purges.metrics).build();
    }

    @Override
    public FencedTable items() {
        return items;
    }

    @Override
    public Purges purges() {
        return purges;
    }

    @Override
    public javax.sql.DataSource ds() {
        return pg.ds;
    }

    @Override
    public String table() {
        return table;
    }

    @Override
    public String schema() {
        return pg.schema.name();
    }

    @Override
    public org.jooq.SQLDialect dialect() {
        return org.jooq.SQLDialect.POSTGRES;
    }

    @Override
    public String storeTag() {
        return "postgres";
    }

    @Override
    public String one(String sql) {
        return pg.one(sql);
    }

    /** {@code tick(clock_timestamp() - ago)} on the database. */
    @Override
    public long tickAgo(Duration ago) throws SQLException {
        return tickAgo(pg, ago);
    }

    /** {@code tick(clock_timestamp() - ago)} on {@code pg}'s database. */
    static long tickAgo(PgTestSupport pg, Duration ago) throws SQLException {
        long micros = ago.toNanos() / 1000;
        try (Connection c = pg.ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT floor((extract(epoch from clock_timestamp()) * 1000000 - ?::numeric) / ?)::bigint")) {
            ps.setLong(1, ClockFloor.EPOCH_MILLIS * 1000 + micros);
            ps.setLong(2, ClockFloor.MICROS_PER_FENCE);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The horizon of rule 1 now. */
    @Override
    public long horizon() throws SQLException {
        return tickAgo(H);
    }

    @Override
    public void tombstone(long id, long fence) throws SQLException {
        pg.exec("INSERT INTO " + table + " (id, fence_token, fence_deleted) VALUES (" + id + ", " + fence + ", TRUE)");
    }

    @Override
    public void live(long id, long fence) throws SQLException {
        pg.exec("INSERT INTO " + table + " (id, body, fence_token) VALUES (" + id + ", 'live', " + fence + ")");
    }

    /** {@code id|fence|deleted} rows in key order. */
    @Override
    public java.util.List<String> rows() {
        return pg.rows("SELECT id || '|' || fence_token || '|' || fence_deleted FROM " + table + " ORDER BY id");
    }

    /** The server process id of {@code c}. */
    static int pid(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /**
     * Returns once the backend {@code waiter} waits on a lock held by {@code holder}: the database's own
     * view of the ordering (pg_blocking_pids), not a guess about timing. Fails after a minute.
     */
    void awaitBlocked(int waiter, int holder) throws SQLException {
        long give = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        try (Connection c = pg.ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT ? = ANY(pg_blocking_pids(?))")) {
            ps.setInt(1, holder);
            ps.setInt(2, waiter);
            while (true) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getBoolean(1)) {
                        return;
                    }
                }
                assertThat(System.nanoTime()).as("backend %d never waited on %d", waiter, holder).isLessThan(give);
            }
        }
    }

    /** Returns once the database's {@code tick(now - ago)} is above {@code fence}; fails after a minute. */
    void awaitTickAbove(Duration ago, long fence) throws SQLException {
        long give = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (tickAgo(ago) <= fence) {
            assertThat(System.nanoTime()).as("the database clock never passed fence %d", fence).isLessThan(give);
        }
    }

    /** Counts purges and stale writes through a {@link LockMetrics} that records nothing else. */
    static final class Purges {
        final Map<String, AtomicLong> removed = new ConcurrentHashMap<>();
        final AtomicLong stale = new AtomicLong();
        final LockMetrics metrics = (LockMetrics) Proxy.newProxyInstance(Purges.class.getClassLoader(), new Class<?>[] {LockMetrics.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "purged" -> {
                        removed.computeIfAbsent(args[0] + "/" + args[1], k -> new AtomicLong()).addAndGet((Long) args[2]);
                        yield null;
                    }
                    case "staleWriteRejected" -> {
                        stale.incrementAndGet();
                        yield null;
                    }
                    case "forLock" -> proxy;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "Purges";
                    default -> null;
                });

        long removed(String store, String kind) {
            return removed.getOrDefault(store + "/" + kind, new AtomicLong()).get();
        }
    }
}
