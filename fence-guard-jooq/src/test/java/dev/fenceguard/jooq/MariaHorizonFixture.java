package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * {@link HorizonFixture} on MariaDB (through either driver): a table of items with a tombstone column and the
 * purge index docs/mysql-mariadb.md recommends, fenced with a horizon, and the server clock's floor. Fences
 * are built from the server's clock, never the JVM's.
 */
final class MariaHorizonFixture implements HorizonStore {

    final MariaTestSupport db;
    final String table;
    final FencedTable items;
    final HorizonFixture.Purges purges = new HorizonFixture.Purges();

    MariaHorizonFixture(MariaTestSupport db, String name, Duration clockMargin) throws SQLException {
        this.db = db;
        this.table = db.q(name);
        db.exec("DROP TABLE IF EXISTS " + table);
        db.exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, body VARCHAR(64), fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE, INDEX fg_tombstones (fence_deleted, id, fence_token)) ENGINE=InnoDB");
        this.items = FencedTable.builder(db.db.name(), name, "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withHorizon(HorizonFixture.H).withClockMargin(clockMargin)
                .withMetrics(purges.metrics).build();
    }

    @Override
    public FencedTable items() {
        return items;
    }

    @Override
    public HorizonFixture.Purges purges() {
        return purges;
    }

    @Override
    public javax.sql.DataSource ds() {
        return db.ds;
    }

    @Override
    public String table() {
        return table;
    }

    @Override
    public String schema() {
        return db.db.name();
    }

    @Override
    public org.jooq.SQLDialect dialect() {
        return org.jooq.SQLDialect.MARIADB;
    }

    /** The fenced writes name MariaDB and MySQL both {@code mysql}. */
    @Override
    public String storeTag() {
        return "mysql";
    }

    @Override
    public String one(String sql) {
        return db.one(sql);
    }

    /** {@code tick(now - ago)} by the server's clock (UTC, exact microseconds), as ClockFloor computes it. */
    @Override
    public long tickAgo(Duration ago) {
        return tickAgo(db, ago);
    }

    /** {@code tick(now - ago)} by the clock of {@code db}'s server. */
    static long tickAgo(MariaTestSupport db, Duration ago) {
        return Long.parseLong(db.one("SELECT (TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', UTC_TIMESTAMP(6)) - "
                + (ClockFloor.EPOCH_MILLIS * 1000 + ago.toNanos() / 1000) + ") DIV " + ClockFloor.MICROS_PER_FENCE));
    }

    /** The horizon of rule 1 now. */
    @Override
    public long horizon() {
        return tickAgo(HorizonFixture.H);
    }

    @Override
    public void tombstone(long id, long fence) throws SQLException {
        db.exec("INSERT INTO " + table + " (id, fence_token, fence_deleted) VALUES (" + id + ", " + fence + ", TRUE)");
    }

    @Override
    public void live(long id, long fence) throws SQLException {
        db.exec("INSERT INTO " + table + " (id, body, fence_token) VALUES (" + id + ", 'live', " + fence + ")");
    }

    /** {@code id|fence|deleted} rows in key order. */
    @Override
    public List<String> rows() {
        return db.rows("SELECT CONCAT(id, '|', fence_token, '|', IF(fence_deleted, 'true', 'false')) FROM " + table + " ORDER BY id");
    }

    /** The server's id of {@code c}'s session. */
    static long connectionId(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT CONNECTION_ID()"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Returns once the session {@code waiter} waits for a row lock (InnoDB reports its transaction in
     * {@code LOCK WAIT}): the server's own view of the ordering, not a guess about timing. Fails after a minute.
     * InnoDB refreshes what {@code INNODB_TRX} shows only once nobody has read it for 0.1 s, so a loop that read
     * it back to back would see the same snapshot for ever: the reads are spaced 150 ms apart (a poll interval,
     * not an ordering).
     */
    void awaitBlocked(long waiter) throws InterruptedException {
        long give = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (db.rows("SELECT 1 FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = " + waiter
                + " AND trx_state = 'LOCK WAIT'").isEmpty()) {
            assertThat(System.nanoTime()).as("session %d never waited for a row lock; transactions: %s", waiter,
                    db.rows("SELECT CONCAT_WS(' ', trx_mysql_thread_id, trx_state, trx_query) FROM information_schema.INNODB_TRX"))
                    .isLessThan(give);
            Thread.sleep(150);
        }
    }

    /** Returns once the server's {@code tick(now - ago)} is above {@code fence}; fails after a minute. */
    void awaitTickAbove(Duration ago, long fence) {
        long give = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (tickAgo(ago) <= fence) {
            assertThat(System.nanoTime()).as("the server clock never passed fence %d", fence).isLessThan(give);
        }
    }
}
