package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import javax.sql.DataSource;

/**
 * The databases fence-guard speaks to, told from a JDBC connection's metadata. Shared by the lock
 * backends' entry and the fenced writes of fence-guard-jooq, so both name a database the same way.
 */
public enum Database {
    POSTGRESQL("PostgreSQL"),
    MARIADB("MariaDB"),
    MYSQL("MySQL");

    /**
     * What each data source turned out to be. Weak keys: a data source that is closed and dropped takes
     * its entry with it; a pool is asked for a connection only the first time.
     */
    private static final Map<DataSource, Database> BY_DATA_SOURCE = Collections.synchronizedMap(new WeakHashMap<>());

    private final String displayName;

    Database(String displayName) {
        this.displayName = displayName;
    }

    /** The product's name as its vendor writes it. */
    public String displayName() {
        return displayName;
    }

    /**
     * The database {@code connection} is open to. MySQL Connector/J calls every server "MySQL"; a MariaDB
     * server says so in its version ({@code 10.11.8-MariaDB}), so it is MariaDB whichever driver is used.
     *
     * @param user who asks, for the error: e.g. {@code "fenced writes"}
     * @throws IllegalArgumentException if it is none fence-guard supports, naming the product
     * @throws FenceGuardException {@code UNAVAILABLE} if the metadata cannot be read
     */
    public static Database of(Connection connection, String user) {
        String product;
        String version;
        try {
            DatabaseMetaData meta = connection.getMetaData();
            product = meta.getDatabaseProductName();
            version = meta.getDatabaseProductVersion();
        } catch (SQLException e) {
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, "connection", "could not read which database the connection is to: "
                    + "SQLSTATE " + e.getSQLState(), SqlCauses.redacted(e, "SQLSTATE " + e.getSQLState()));
        }
        return fromProduct(product, version).orElseThrow(() -> new IllegalArgumentException(
                user + " support PostgreSQL, MariaDB and MySQL; the connection is to '" + product + "'"));
    }

    /** The database of a product name and version as JDBC reports them, if fence-guard supports it. */
    static Optional<Database> fromProduct(String product, String version) {
        String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return Optional.of(POSTGRESQL);
        }
        if (p.contains("mariadb") || (p.contains("mysql") && version != null && version.toLowerCase(Locale.ROOT).contains("mariadb"))) {
            return Optional.of(MARIADB);
        }
        return p.contains("mysql") ? Optional.of(MYSQL) : Optional.empty();
    }

    /** The database of {@code dataSource} if it was learnt already (no I/O). */
    public static Optional<Database> known(DataSource dataSource) {
        return Optional.ofNullable(BY_DATA_SOURCE.get(dataSource));
    }

    /**
     * The database of {@code dataSource}, from one connection the first time it is asked for this data
     * source, remembered after.
     *
     * @throws IllegalArgumentException if it is none fence-guard supports, naming the product
     * @throws FenceGuardException {@code UNAVAILABLE} if no connection could be opened
     */
    public static Database of(DataSource dataSource, String user) {
        Database known = BY_DATA_SOURCE.get(dataSource);
        if (known != null) {
            return known;
        }
        Database found;
        try (Connection c = dataSource.getConnection()) {
            found = of(c, user);
        } catch (SQLException e) {
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, "dataSource", "could not open a connection to tell which database it is"
                    + " (SQLSTATE " + e.getSQLState() + ")", SqlCauses.redacted(e, "SQLSTATE " + e.getSQLState()));
        }
        BY_DATA_SOURCE.put(dataSource, found);
        return found;
    }
}
