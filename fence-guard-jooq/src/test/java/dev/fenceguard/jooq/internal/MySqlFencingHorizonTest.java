package dev.fenceguard.jooq.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * MariaDB and MySQL have no purge horizon yet: {@code FencedTable} refuses such tables before any statement,
 * so the horizon methods are unreachable through the API. Called directly, they say what is missing
 * rather than throwing a bare dialect name. No statement runs (no session is needed to refuse).
 */
class MySqlFencingHorizonTest {

    @Test
    void theHorizonMethodsSayTheHorizonIsNotYetOnMariaDbOrMySql() {
        FencingDialect dialect = MySqlFencing.INSTANCE;
        assertThat(dialect.supportsHorizon()).isFalse();

        assertThatThrownBy(() -> dialect.runHorizonUpsert(null, null, null))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("upsert of a table with a horizon")
                .hasMessageContaining("not yet available on MariaDB or MySQL");
        assertThatThrownBy(() -> dialect.readWithHorizon(null, null, null, null))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("read of a table with a horizon")
                .hasMessageContaining("not yet available on MariaDB or MySQL");
        assertThatThrownBy(() -> dialect.purgeBatch(null, null, null, 1, null))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("purge of tombstones")
                .hasMessageContaining("not yet available on MariaDB or MySQL");
    }
}
