package dev.fenceguard.jooq;

import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Rule 1 and the purge of docs/fence-lifecycle.md on PostgreSQL, one writer at a time: the cases of
 * {@link HorizonCases}, and the checks of settings and input that need no database.
 */
class PostgresHorizonTest extends HorizonCases {

    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("horizon");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Override
    HorizonStore fixture() throws Exception {
        return new HorizonFixture(pg, "items", Duration.ofMinutes(5));
    }

    /** A data source that fails the test if anything asks it for a connection. */
    private static DataSource noIo() {
        return (DataSource) Proxy.newProxyInstance(PostgresHorizonTest.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "noIo";
                    default -> throw new AssertionError("I/O before the checks: DataSource." + m.getName());
                });
    }

    @Test
    void badSettingsAndInputFailBeforeAnyIo() {
        FencedTable.Builder b = FencedTable.builder("s", "t", "id", "fence_token").withKeyType(Long.class).withTombstoneColumn("gone");
        assertThatThrownBy(() -> b.withHorizon(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("horizon must be between 1 s and 3650 days, was PT0S");
        assertThatThrownBy(() -> b.withHorizon(Duration.ofDays(3651))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.withHorizon(null)).isInstanceOf(NullPointerException.class).hasMessage("horizon");
        assertThatThrownBy(() -> b.withClockMargin(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("clockMargin must be between 0 and 1 day, was PT-1S");
        assertThatThrownBy(() -> FencedTable.builder("s", "t", "id", "fence_token").withClockMargin(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("withClockMargin needs withHorizon");
        assertThatThrownBy(() -> FencedTable.builder("s", "t", "id", "fence_token").withEncoding(FenceEncoding.TEXT)
                .withHorizon(Duration.ofDays(7)).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("withHorizon needs FenceEncoding.INTEGER");

        FencedTable withHorizon = b.withHorizon(Duration.ofDays(7)).build();
        assertThat(withHorizon.clockMargin()).isEqualTo(Duration.ofMinutes(5));
        for (SQLDialect dialect : List.of(SQLDialect.MARIADB, SQLDialect.MYSQL)) {
            assertThat(withHorizon.on(DSL.using(dialect))).as("MariaDB and MySQL take a horizon too (MariaDbHorizonTest)").isNotNull();
        }
        FencedWriter lazy = withHorizon.on(noIo());
        assertThatThrownBy(() -> lazy.purge(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lazy.purge(Purge.ofDefaults().withStartAfter("not a number"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot be converted");
        FencedWriter noTombstone = FencedTable.builder("s", "t", "id", "fence_token").withHorizon(Duration.ofDays(7)).build().on(noIo());
        assertThatThrownBy(() -> noTombstone.purge(Purge.ofDefaults())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs a tombstone column");
        FencedWriter noHorizon = FencedTable.builder("s", "t", "id", "fence_token").withTombstoneColumn("gone").build().on(noIo());
        assertThatThrownBy(() -> noHorizon.purge(Purge.ofDefaults())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs a horizon (FencedTable.Builder.withHorizon)");

        assertThatThrownBy(() -> Purge.ofDefaults().withBatchSize(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("batchSize must be between 1 and 100000, was 0");
        assertThatThrownBy(() -> Purge.ofDefaults().withBatchSize(100_001)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Purge.ofDefaults().withMaxDuration(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxDuration must be positive, was PT0S");
        assertThatThrownBy(() -> Purge.ofDefaults().withStartAfter(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new PurgeResult(1, 1, true, java.util.Optional.of(1L))).isInstanceOf(IllegalArgumentException.class);
    }
}
