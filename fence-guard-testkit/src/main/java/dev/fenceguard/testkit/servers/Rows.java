package dev.fenceguard.testkit.servers;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** Query results as the harness hands them to tests: one string per row, columns joined by {@code |}, NULL as "null". */
final class Rows {

    private Rows() {}

    static List<String> of(ResultSet rs) throws SQLException {
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
    }
}
