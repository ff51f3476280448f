package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import javax.sql.DataSource;
import org.jooq.SQLDialect;

/** Which {@link FencingDialect} speaks to a database: by jOOQ dialect, or by the JDBC connection's product name. */
public final class Dialects {

    /**
     * What each data source turned out to be. Weak keys: a data source that is closed and dropped takes
     * its entry with it; a pool is asked for a connection only the first time.
     */
    private static final Map<DataSource, FencingDialect> BY_DATA_SOURCE = Collections.synchronizedMap(new WeakHashMap<>());

    private Dialects() {}

    /** The dialect for a jOOQ dialect, if fence-guard has one. */
    public static Optional<FencingDialect> of(SQLDialect dialect) {
        if (PostgresFencing.INSTANCE.accepts(dialect)) {
            return Optional.of(PostgresFencing.INSTANCE);
        }
        return MySqlFencing.INSTANCE.accepts(dialect) ? Optional.of(MySqlFencing.INSTANCE) : Optional.empty();
    }

    /**
     * The dialect of the database {@code connection} is open to.
     *
     * @throws IllegalArgumentException if it is none fence-guard writes to
     */
    public static FencingDialect of(Connection connection) {
        String product;
        try {
            product = connection.getMetaData().getDatabaseProductName();
        } catch (SQLException e) {
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, "connection", "could not read which database the connection is to: "
                    + "SQLSTATE " + e.getSQLState(), SqlCauses.redacted(e, "SQLSTATE " + e.getSQLState()));
        }
        String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return PostgresFencing.INSTANCE;
        }
        if (p.contains("mysql") || p.contains("mariadb")) {
            return MySqlFencing.INSTANCE;
        }
        throw new IllegalArgumentException("fenced writes support PostgreSQL, MySQL and MariaDB; the connection is to '" + product + "'");
    }

    /** The dialect of {@code dataSource}'s database if it was learnt already (no I/O). */
    public static Optional<FencingDialect> known(DataSource dataSource) {
        return Optional.ofNullable(BY_DATA_SOURCE.get(dataSource));
    }

    /** The dialect of {@code dataSource}'s database, from its first connection (remembered). */
    public static FencingDialect of(DataSource dataSource) {
        FencingDialect known = BY_DATA_SOURCE.get(dataSource);
        if (known != null) {
            return known;
        }
        FencingDialect found;
        try (Connection c = dataSource.getConnection()) {
            found = of(c);
        } catch (SQLException e) {
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, "dataSource", "could not open a connection to tell which database it is"
                    + " (SQLSTATE " + e.getSQLState() + ")", SqlCauses.redacted(e, "SQLSTATE " + e.getSQLState()));
        }
        BY_DATA_SOURCE.put(dataSource, found);
        return found;
    }
}
