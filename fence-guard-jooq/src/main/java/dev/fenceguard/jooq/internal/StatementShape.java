package dev.fenceguard.jooq.internal;

import java.util.List;
import org.jooq.DataType;

/**
 * One fenced statement rendered once: its SQL with {@code ?} placeholders, and for each placeholder the
 * slot of the per-call values it takes ({@link FencedStatements#KEY}, {@link FencedStatements#FENCE}, ...)
 * and the jOOQ type it is bound as. Immutable; shared by every write of the same shape.
 *
 * @param sql the statement, as jOOQ renders it with indexed parameters
 * @param slots for each placeholder in order, the index of its value in the per-call array
 * @param types for each placeholder, the data type of the column or expression it stands for
 * @param plainJdbc whether every placeholder's type binds as the JDBC driver binds its Java value (no
 *     jOOQ converter or custom binding), so the statement may skip jOOQ's execution machinery
 */
public record StatementShape(String sql, int[] slots, List<DataType<?>> types, boolean plainJdbc) {

    @Override
    public String toString() {
        return sql;
    }
}
