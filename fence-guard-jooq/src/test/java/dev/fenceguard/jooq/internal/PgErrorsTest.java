package dev.fenceguard.jooq.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.jdbc.internal.PgErrors;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.jooq.exception.DataAccessException;
import org.jooq.exception.DataTypeException;
import org.junit.jupiter.api.Test;

/** One mapper for the lock backend and the fenced writes, also through jOOQ's exceptions: by the SQLSTATE wherever it is in the chain. */
class PgErrorsTest {

    private static final String ROW = "Failing row contains (42, secret-lock-id)";

    @Test
    void theStateIsTakenFromDeepInTheCauseChain() {
        SQLException driver = new SQLException("ERROR: could not serialize access due to concurrent update", "40001");
        SQLException wrapper = new SQLException("wrapper without a state", null, 0, driver);
        RuntimeException translated = new RuntimeException("a framework's translation", new DataAccessException("SQL [update ..]", wrapper));

        FenceGuardException e = PgErrors.map(translated, "orders[id=42]", "fenced update");

        assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(e.getMessage()).contains("orders[id=42]").contains("fenced update failed: SQLSTATE 40001");
        assertThat(e.getCause()).isInstanceOfSatisfying(SQLException.class, c -> assertThat(c.getSQLState()).isEqualTo("40001"));
        assertThat(PgErrors.code(wrapper)).as("an outer SQLException without a state").isEqualTo(ErrorCode.UNAVAILABLE);
    }

    @Test
    void aWrappedConstraintViolationIsMappedWithoutTheRow() {
        SQLException driver = new SQLException("ERROR: duplicate key value violates unique constraint. Detail: " + ROW, "23505");
        FenceGuardException e = PgErrors.map(new DataAccessException("SQL [insert ..]; " + driver.getMessage(), driver), "k", "fenced upsert");
        assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
        assertThat(e.getMessage()).contains("SQLSTATE 23505").doesNotContain(ROW);
        assertThat(e.getCause().getMessage()).doesNotContain(ROW);
        assertThat(e.getCause().getCause()).isNull();
    }

    @Test
    void aJooqErrorWithoutADriverErrorIsInternalAndQuotesNothing() {
        DataAccessException jooq = new DataTypeException("Cannot convert from " + ROW);
        FenceGuardException e = PgErrors.map(jooq, "orders[id=42]", "fenced update");
        assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
        assertThat(e.getMessage()).contains(DataTypeException.class.getName()).doesNotContain(ROW);
        assertThat(e.getCause().getMessage()).doesNotContain(ROW);
    }

    @Test
    void fenceGuardsOwnAndConnectionErrorsKeepTheirMeaning() {
        FenceGuardException own = new FenceGuardException(ErrorCode.TIMEOUT, "k", "late");
        assertThat(PgErrors.map((Throwable) own, "k", "op")).isSameAs(own);
        assertThat(PgErrors.map(new SQLTransientConnectionException("pool empty"), "k", "op").code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(PgErrors.map(new SQLException("no such table", "42P01"), "k", "op").getMessage()).contains("FenceGuardMigrations");
    }
}
