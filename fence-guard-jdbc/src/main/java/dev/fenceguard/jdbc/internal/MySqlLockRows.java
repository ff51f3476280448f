package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.LockKey;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

/** Values of the MySQL/MariaDB lock table's columns, shared by its two backends. */
public final class MySqlLockRows {

    private MySqlLockRows() {}

    /** {@code lock_key}: the key's UTF-8 bytes (text collations would fold case and trailing spaces). */
    public static byte[] bytes(LockKey key) {
        return key.value().getBytes(StandardCharsets.UTF_8);
    }

    /** A TTL for {@code INTERVAL ? MICROSECOND}. */
    public static long micros(Duration ttl) {
        return ttl.toMillis() * 1000;
    }

    /** A {@code DATETIME(6)} that holds UTC. */
    public static Instant instant(ResultSet rs, int column) throws SQLException {
        return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
    }
}
