package dev.fenceguard.jooq.internal;

import dev.fenceguard.jdbc.internal.Database;
import java.sql.Connection;
import java.util.Optional;
import javax.sql.DataSource;
import org.jooq.SQLDialect;

/** Which {@link FencingDialect} speaks to a database: by jOOQ dialect, or by the JDBC connection's product name. */
public final class Dialects {

    /** Who asks, in the error for an unsupported database. */
    private static final String WHO = "fenced writes";

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
        return of(Database.of(connection, WHO));
    }

    /** The dialect of {@code dataSource}'s database if it was learnt already (no I/O). */
    public static Optional<FencingDialect> known(DataSource dataSource) {
        return Database.known(dataSource).map(Dialects::of);
    }

    /** The dialect of {@code dataSource}'s database, from its first connection (remembered). */
    public static FencingDialect of(DataSource dataSource) {
        return of(Database.of(dataSource, WHO));
    }

    private static FencingDialect of(Database database) {
        return database == Database.POSTGRESQL ? PostgresFencing.INSTANCE : MySqlFencing.INSTANCE;
    }
}
