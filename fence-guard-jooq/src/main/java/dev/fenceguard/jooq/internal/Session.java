package dev.fenceguard.jooq.internal;

import dev.fenceguard.jdbc.internal.SqlCauses;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.jooq.DSLContext;
import org.jooq.Param;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * Runs rendered statements ({@link StatementShape}) on the connection of one write: the caller's (in
 * its transaction) or one of its own. A statement whose values are all plain JDBC values is prepared
 * and bound directly, the way a hand-written {@code PreparedStatement} is; a statement with a value
 * only jOOQ knows how to bind (a column with a converter or custom binding, a {@code JSONB}, an array,
 * an enum) runs through jOOQ on the same connection, with the same SQL. jOOQ's per-statement machinery
 * (execute context, listeners, result mapping) cost a fenced {@code UPDATE} several times its
 * rendering; {@code ExecuteListener}s see only the statements that run through jOOQ.
 */
public final class Session {

    /** Values pgjdbc binds with {@code setObject} exactly as jOOQ's own bindings would. */
    private static final Set<Class<?>> JDBC_VALUES = Set.of(String.class, Long.class, Integer.class, Short.class, BigDecimal.class,
            Double.class, Float.class, Boolean.class, UUID.class, byte[].class, LocalDate.class, LocalTime.class, LocalDateTime.class,
            OffsetDateTime.class);

    private final Connection connection;
    /** The caller's context, whose configuration statements run through jOOQ take; null for fence-guard's own. */
    private final DSLContext callerContext;
    private final SQLDialect dialect;
    private DSLContext jooq;

    /**
     * @param connection where statements run
     * @param callerContext the caller's {@code DSLContext} whose configuration statements that need jOOQ's
     *     binding run with (on {@code connection}), or null to run them with fence-guard's own in {@code dialect}
     * @param dialect the dialect of fence-guard's own context
     */
    public Session(Connection connection, DSLContext callerContext, SQLDialect dialect) {
        this.connection = connection;
        this.callerContext = callerContext;
        this.dialect = dialect;
    }

    /** Runs {@code shape} with {@code values} (indexed by slot); returns its update count. */
    public int execute(StatementShape shape, Object[] values) throws SQLException {
        if (bindsAsJdbc(shape, values)) {
            try (PreparedStatement ps = connection.prepareStatement(shape.sql())) {
                bind(ps, shape, values);
                return ps.executeUpdate();
            }
        }
        try {
            return jooq().query(shape.sql(), params(shape, values)).execute();
        } catch (DataAccessException e) {
            throw unwrapped(e);
        }
    }

    /**
     * Runs {@code shape} with {@code values} and returns its update count and the insert id the server
     * reported for it (MySQL's OK packet: an {@code AUTO_INCREMENT} value, or the argument of a
     * {@code LAST_INSERT_ID(expr)} the statement evaluated), 0 if none; -1 when the statement ran through
     * jOOQ, which does not hand the id back.
     */
    public long[] executeWithInsertId(StatementShape shape, Object[] values) throws SQLException {
        if (!bindsAsJdbc(shape, values)) {
            return new long[] {execute(shape, values), -1};
        }
        try (PreparedStatement ps = connection.prepareStatement(shape.sql(), java.sql.Statement.RETURN_GENERATED_KEYS)) {
            bind(ps, shape, values);
            int rows = ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                // An unsigned BIGINT in the packet; ids fence-guard sets stay below 2^63.
                return new long[] {rows, keys.next() ? keys.getLong(1) : 0};
            }
        }
    }

    /** Runs {@code shape} with {@code values}; returns its rows, each as its column values. */
    public List<Object[]> fetch(StatementShape shape, Object[] values) throws SQLException {
        List<Object[]> rows = new ArrayList<>();
        if (bindsAsJdbc(shape, values)) {
            try (PreparedStatement ps = connection.prepareStatement(shape.sql())) {
                bind(ps, shape, values);
                try (ResultSet rs = ps.executeQuery()) {
                    int columns = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        Object[] row = new Object[columns];
                        for (int i = 0; i < columns; i++) {
                            row[i] = rs.getObject(i + 1);
                        }
                        rows.add(row);
                    }
                }
            }
            return rows;
        }
        try {
            for (Record r : jooq().resultQuery(shape.sql(), params(shape, values)).fetch()) {
                rows.add(r.intoArray());
            }
            return rows;
        } catch (DataAccessException e) {
            throw unwrapped(e);
        }
    }

    /**
     * Has the database parse and describe {@code shape} without running it (JDBC {@code
     * getParameterMetaData}: for pgjdbc, Parse and Describe, no Execute), so it writes nothing and locks
     * no row, yet fails like the statement would if a table or column is missing.
     */
    public void describe(StatementShape shape) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(shape.sql())) {
            ps.getParameterMetaData();
        }
    }

    /**
     * Has MySQL or MariaDB plan {@code shape} without running it: {@code EXPLAIN <statement>} with every value
     * NULL. Their drivers prepare statements on the client, so {@link #describe} never reaches the server;
     * {@code EXPLAIN} parses the statement and resolves its tables and columns (a missing one fails as the
     * statement would), executes nothing, writes nothing and evaluates no {@code LAST_INSERT_ID(expr)}.
     */
    public void explain(StatementShape shape) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("explain " + shape.sql())) {
            for (int i = 0; i < shape.slots().length; i++) {
                ps.setNull(i + 1, shape.types().get(i).getSQLType());
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    // the plan is not needed; reading it finishes the statement
                }
            }
        }
    }

    /** Work whose result may have to be undone. */
    public interface Undoable<T> {
        T apply(Session session) throws SQLException;
    }

    /**
     * Runs {@code work} so that it can be undone: under a savepoint inside the connection's transaction,
     * or, on a connection in auto-commit mode, in a transaction of its own that is committed here. If
     * {@code undo} says so of the result, everything {@code work} wrote is rolled back (to the savepoint,
     * or the whole transaction of its own). If {@code work} throws, a transaction of its own is rolled
     * back; the caller's transaction is left as the database left it.
     */
    public <T> T undoable(Undoable<T> work, java.util.function.Predicate<T> undo) throws SQLException {
        boolean own = connection.getAutoCommit();
        java.sql.Savepoint savepoint = null;
        if (own) {
            connection.setAutoCommit(false);
        } else {
            savepoint = connection.setSavepoint();
        }
        try {
            T result;
            try {
                result = work.apply(this);
            } catch (SQLException | RuntimeException e) {
                if (own) {
                    connection.rollback();
                }
                throw e;
            }
            if (undo.test(result)) {
                if (own) {
                    connection.rollback();
                } else {
                    connection.rollback(savepoint);
                }
            } else if (own) {
                connection.commit();
            } else {
                connection.releaseSavepoint(savepoint);
            }
            return result;
        } finally {
            if (own) {
                connection.setAutoCommit(true);
            }
        }
    }

    /**
     * Runs {@code work} in one transaction: on a connection in auto-commit mode, a transaction of its own at
     * {@code isolation}, committed here (rolled back if {@code work} throws), the connection's isolation and
     * auto-commit restored afterwards; inside the caller's transaction, as it is (its isolation cannot change
     * there, and its commit is the caller's).
     */
    public <T> T inTransaction(int isolation, Undoable<T> work) throws SQLException {
        if (!connection.getAutoCommit()) {
            return work.apply(this);
        }
        int was = connection.getTransactionIsolation();
        connection.setTransactionIsolation(isolation);
        connection.setAutoCommit(false);
        try {
            T result = work.apply(this);
            connection.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(true);
            connection.setTransactionIsolation(was);
        }
    }

    private DSLContext jooq() {
        if (jooq == null) { // made only when a statement needs it: most writes never run through jOOQ
            jooq = callerContext != null ? callerContext.configuration().derive(connection).dsl() : DSL.using(connection, dialect);
        }
        return jooq;
    }

    private static boolean bindsAsJdbc(StatementShape shape, Object[] values) {
        if (!shape.plainJdbc()) {
            return false;
        }
        for (int slot : shape.slots()) {
            Object v = values[slot];
            if (v != null && !JDBC_VALUES.contains(v.getClass())) {
                return false;
            }
        }
        return true;
    }

    private static void bind(PreparedStatement ps, StatementShape shape, Object[] values) throws SQLException {
        int[] slots = shape.slots();
        for (int i = 0; i < slots.length; i++) {
            Object v = values[slots[i]];
            if (v == null) {
                ps.setNull(i + 1, shape.types().get(i).getSQLType());
            } else {
                ps.setObject(i + 1, v);
            }
        }
    }

    /** The values as jOOQ parameters of their columns' types, for jOOQ to bind (converters, custom bindings). */
    private static Object[] params(StatementShape shape, Object[] values) {
        int[] slots = shape.slots();
        Param<?>[] params = new Param<?>[slots.length];
        for (int i = 0; i < slots.length; i++) {
            params[i] = DSL.val(values[slots[i]], shape.types().get(i));
        }
        return params;
    }

    /** The driver's exception inside jOOQ's, so that both ways of running a statement fail alike. */
    private static RuntimeException unwrapped(DataAccessException e) throws SQLException {
        SQLException sql = SqlCauses.of(e).orElse(null);
        if (sql != null) {
            throw sql;
        }
        return e;
    }
}
