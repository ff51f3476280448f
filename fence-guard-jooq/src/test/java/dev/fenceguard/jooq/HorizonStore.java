package dev.fenceguard.jooq;

import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.SQLDialect;

/**
 * A table of items fenced with a horizon on one database ({@link HorizonFixture}, {@link MariaHorizonFixture}):
 * what {@link HorizonCases} needs to run the same cases on each.
 */
interface HorizonStore {

    /** The fenced table: id BIGINT key, body text, fence_token, fence_deleted; horizon {@link HorizonFixture#H}. */
    FencedTable items();

    HorizonFixture.Purges purges();

    DataSource ds();

    /** The table's qualified name, for SQL. */
    String table();

    /** The schema (database) the table lives in. */
    String schema();

    /** The jOOQ dialect of the database. */
    SQLDialect dialect();

    /** The {@code store} tag the purge meter gets on this database. */
    String storeTag();

    /** {@code tick(now - ago)} by the database's clock. */
    long tickAgo(Duration ago) throws Exception;

    /** The horizon of rule 1 now. */
    default long horizon() throws Exception {
        return tickAgo(HorizonFixture.H);
    }

    void tombstone(long id, long fence) throws Exception;

    void live(long id, long fence) throws Exception;

    /** {@code id|fence|deleted} rows in key order. */
    List<String> rows();

    /** The first column of the first row of {@code sql}, as text. */
    String one(String sql);
}
