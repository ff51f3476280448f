package dev.fenceguard.jpa.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import jakarta.persistence.PersistenceException;
import jakarta.persistence.QueryTimeoutException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import org.hibernate.exception.ConstraintViolationException;
import org.junit.jupiter.api.Test;

/** How errors a JPA provider throws become FenceGuardExceptions: code by SQLSTATE, no server text in messages or causes. */
class JpaErrorsTest {

    private static final String SECRET = "Failing row contains (42, card 4111-1111)";

    private static FenceGuardException mapped(String state) {
        return JpaErrors.map(new PersistenceException("wrapped: " + SECRET, new SQLException(SECRET, state)), "Order[id=42]", "fenced update");
    }

    @Test
    void codesFollowTheSqlstateClass() {
        assertThat(mapped("08006").code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(mapped("40001").code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(mapped("40P01").code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(mapped("53300").code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(mapped("57014").code()).isEqualTo(ErrorCode.TIMEOUT);
        assertThat(mapped("55P03").code()).isEqualTo(ErrorCode.TIMEOUT);
        assertThat(mapped("28P01").code()).isEqualTo(ErrorCode.AUTH);
        assertThat(mapped("42501").code()).isEqualTo(ErrorCode.AUTH);
        assertThat(mapped("23505").code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(mapped("22001").code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(mapped("42P01").code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(mapped("XX000").code()).isEqualTo(ErrorCode.INTERNAL);
        assertThat(JpaErrors.map(new IllegalStateException("no SQL here"), "r", "op").code()).isEqualTo(ErrorCode.INTERNAL);
    }

    @Test
    void jdbcAndJpaTimeoutsAndTransientConnectionsAreKnownWithoutASqlstate() {
        assertThat(JpaErrors.map(new PersistenceException(new SQLTimeoutException("t")), "r", "op").code()).isEqualTo(ErrorCode.TIMEOUT);
        assertThat(JpaErrors.map(new QueryTimeoutException("t"), "r", "op").code()).isEqualTo(ErrorCode.TIMEOUT);
        assertThat(JpaErrors.map(new PersistenceException(new SQLTransientConnectionException("c")), "r", "op").code())
                .isEqualTo(ErrorCode.UNAVAILABLE);
    }

    @Test
    void messagesAndCausesNameTheStateAndConstraintButQuoteNoRow() {
        SQLException server = new SQLException(SECRET, "23505");
        FenceGuardException e = JpaErrors.map(new ConstraintViolationException("insert into orders ... " + SECRET, server, "orders_pkey"),
                "Order[id=42]", "fenced upsert");
        assertThat(e.getMessage()).isEqualTo("INVALID_ARGUMENT (key 'Order[id=42]'): fenced upsert failed: SQLSTATE 23505, constraint "
                + "\"orders_pkey\" (server message withheld: it may quote row contents)");
        for (Throwable c = e; c != null; c = c.getCause()) {
            assertThat(String.valueOf(c.getMessage())).doesNotContain("4111").doesNotContain("insert into");
        }
    }

    @Test
    void fenceGuardsOwnErrorsPassUnchanged() {
        FenceGuardException own = new FenceGuardException(ErrorCode.UNAVAILABLE, "r", "gave up");
        assertThat(JpaErrors.map(own, "r", "op")).isSameAs(own);
    }
}
