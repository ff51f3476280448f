package dev.fenceguard.spring.jdbc;

import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import java.sql.Connection;
import java.util.Objects;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.DataSourceConnectionProvider;
import org.jooq.tools.jdbc.JDBCUtils;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Fenced writes to a {@link FencedTable} that join the Spring transaction of the calling thread, if any.
 * Inside {@code @Transactional} (or a {@code TransactionTemplate}) on the same {@link DataSource}, the
 * write runs on the transaction's connection: it commits with it, and a rollback undoes the data and
 * the stored fence together. Outside any transaction, each write runs on a connection of its own and
 * is committed before it returns, as {@link FencedTable#on(DataSource)} does.
 *
 * <pre>{@code
 * @FencedLock(key = "'orders:' + #id")
 * @Transactional
 * public void ship(long id, Lease lease) {
 *     writes.on(orders).update(id, lease.fence(), Assignments.of("status", "shipped")).orThrow();
 *     outbox.add(new Shipped(id));   // same transaction
 * }
 * }</pre>
 *
 * <p>Statements are written for the database the DataSource is to, PostgreSQL, MariaDB or MySQL, as
 * the connection's metadata tells on the first write in a transaction; writes outside a transaction
 * learn it as {@link FencedTable#on(DataSource)} does.
 *
 * <p>The choice is made when {@link #on} is called: take a writer where you write, as you would call
 * {@code table.on(dataSource)}, rather than keeping one across transactions. Immutable and thread-safe;
 * the Spring Boot auto-configuration provides one for the application's DataSource.
 *
 * @since 0.1
 */
public final class TransactionalFencedWrites {

    private final DataSource dataSource;
    private final DataSource transactionAware;
    /** Made by the first write in a transaction, in the dialect of the database it is to; then kept. */
    private volatile DSLContext transactional;

    private TransactionalFencedWrites(DataSource dataSource) {
        this.dataSource = dataSource;
        // jOOQ asks the proxy for a connection per statement; inside a transaction the proxy hands out
        // the transaction's connection (and ignores close), which is how Spring's own JdbcTemplate joins it.
        this.transactionAware = new TransactionAwareDataSourceProxy(dataSource);
    }

    /**
     * Writes on {@code dataSource}, the DataSource of the application's transaction manager.
     *
     * @throws NullPointerException if {@code dataSource} is null
     */
    public static TransactionalFencedWrites of(DataSource dataSource) {
        return new TransactionalFencedWrites(Objects.requireNonNull(dataSource, "dataSource"));
    }

    /**
     * A writer for {@code table}: in the current transaction if one is active on this thread (or Spring
     * holds a connection of this DataSource for it), else committing each write on its own.
     *
     * @throws NullPointerException if {@code table} is null
     * @throws IllegalArgumentException inside a transaction, if the DataSource is to another database
     *     than PostgreSQL, MariaDB or MySQL
     */
    public FencedWriter on(FencedTable table) {
        Objects.requireNonNull(table, "table");
        boolean joined = TransactionSynchronizationManager.isActualTransactionActive()
                || TransactionSynchronizationManager.hasResource(dataSource);
        return joined ? table.on(transactional()) : table.on(dataSource);
    }

    /**
     * The context of writes that join the transaction, rendering for the database the DataSource is to
     * (PostgreSQL, MariaDB or MySQL), which the transaction's own connection tells: a second connection
     * from a small pool could wait for the one the transaction holds.
     */
    private DSLContext transactional() {
        DSLContext ctx = transactional;
        if (ctx == null) {
            SQLDialect dialect;
            Connection c = DataSourceUtils.getConnection(dataSource);
            try {
                dialect = JDBCUtils.dialect(c);
            } finally {
                DataSourceUtils.releaseConnection(c, dataSource);
            }
            ctx = DSL.using(new DataSourceConnectionProvider(transactionAware), dialect);
            transactional = ctx; // a race makes two equal contexts: harmless
        }
        return ctx;
    }

    /** The DataSource written to. */
    public DataSource dataSource() {
        return dataSource;
    }
}
