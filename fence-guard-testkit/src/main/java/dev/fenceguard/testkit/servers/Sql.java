package dev.fenceguard.testkit.servers;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The statements the SQL test servers ({@link TestPostgres}, {@link TestMariaDb}) run for tests, on a
 * connection of their own each: a failure is an {@link IllegalStateException} naming the server and the
 * statement, and query results are handed over as strings, one per row, columns joined by {@code |},
 * NULL as "null".
 */
final class Sql {

    private Sql() {}

    /** A way to open a connection (a data source's or the driver manager's). */
    @FunctionalInterface
    interface Connect {
        Connection open() throws SQLException;
    }

    /**
     * Runs {@code sql}.
     *
     * @param server the server in messages, e.g. {@code "MariaDB"}
     */
    static void execute(Connect connect, String server, String sql) {
        try (Connection c = connect.open(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw failed(server, sql, e);
        }
    }

    /** The rows of {@code sql}. */
    static List<String> query(Connect connect, String server, String sql) {
        try (Connection c = connect.open(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            List<String> out = new ArrayList<>();
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= n; i++) {
                    row.append(i > 1 ? "|" : "").append(rs.getString(i));
                }
                out.add(row.toString());
            }
            return out;
        } catch (SQLException e) {
            throw failed(server, sql, e);
        }
    }

    private static IllegalStateException failed(String server, String sql, SQLException e) {
        return new IllegalStateException("on " + server + ": " + sql + ": " + e.getMessage(), e);
    }
}
