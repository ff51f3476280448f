package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.SingleflightContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** Singleflight on PostgreSQL: the contract, with LISTEN/NOTIFY for waiters, plus what is PostgreSQL's own. */
class PostgresSingleflightTest extends SingleflightContract {

    private static PgTestSupport pg;
    private static LockBackend backend;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("singleflight");
        backend = new PostgresLockBackend(pg.lockTable("locks"));
        FenceGuardMigrations.singleflightBuilder(pg.ds).withSchema(pg.schema.name()).withTable("flights").migrate();
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Override
    protected LockBackend lockBackend() {
        return backend;
    }

    @Override
    protected FlightStore newStore() {
        return new PostgresFlightStore(TableSettings.of(pg.ds).withTable("fence_guard_flights").withSchema(pg.schema.name()).withTable("flights"), pg.ds);
    }

    @Test
    void aStoreOnAnUnreachableServerFailsWithUnavailableAndItsWaitersPoll() {
        PGSimpleDataSource nowhere = new PGSimpleDataSource();
        nowhere.setURL("jdbc:postgresql://127.0.0.1:1/test?connectTimeout=2");
        try (PostgresFlightStore store = new PostgresFlightStore(TableSettings.of(nowhere).withTable("fence_guard_flights").withSchema(pg.schema.name()).withTable("flights"), nowhere)) {
            assertThatThrownBy(() -> store.read(LockKey.of(key("x")), Duration.ofSeconds(10)).toCompletableFuture().join())
                    .cause().isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
            assertThatThrownBy(() -> store.watch(LockKey.of(key("x")), () -> {}).toCompletableFuture().join())
                    .as("no LISTEN: the caller falls back to polling").cause().isInstanceOfSatisfying(FenceGuardException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
        }
    }

    @Test
    void aMissingTableIsReportedWithAMappedCode() {
        try (PostgresFlightStore store = new PostgresFlightStore(TableSettings.of(pg.ds).withTable("fence_guard_flights").withSchema(pg.schema.name()).withTable("no_such_table"), pg.ds)) {
            assertThatThrownBy(() -> store.begin(LockKey.of(key("x")), 1, Duration.ofSeconds(10)).toCompletableFuture().join())
                    .cause().isInstanceOf(FenceGuardException.class).hasMessageContaining("42P01");
        }
    }

    @Test
    void badNamesAreRefusedBeforeAnySql() {
        assertThatThrownBy(() -> FenceGuardJdbc.builder(pg.ds).withFlightTable("flights; DROP TABLE x")).hasMessageStartingWith("flight table must");
        assertThatThrownBy(() -> FenceGuardJdbc.builder(pg.ds).withSchema("a b")).hasMessageStartingWith("schema must");
        assertThat(PostgresFlightStore.channelOf("public", "x".repeat(63))).matches("fg_sf_[0-9a-f]{16}");
    }
}
