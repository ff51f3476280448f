package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Fenced writes on PostgreSQL as {@code fenceguard.write} observations, nested under {@code withLock}. */
@Timeout(120) // a guard against a hang, not a timing assertion
class FencedWriterObservationTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final String LOCK_KEY = "orders:customer-4711";
    private static final String ROW = "order-7f3a";
    private static final String NEWER_ROW = "order-9c1e";
    private static final FenceToken HIGHEST = FenceToken.of(900_000_000_000_000L);

    private static final Predicate<Observation.ContextView> WITH_LOCK = c -> c.getName().equals("fenceguard.with.lock");

    private static PgTestSupport pg;
    private static LockBackend backend;

    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final LockObservations observations = MicrometerLockObservations.of(registry);
    private final LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none()).withObservations(observations).build();
    private String table;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("observed");
        backend = pg.lockBackend("locks");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @BeforeEach
    void createTable() throws Exception {
        table = pg.q("orders");
        pg.exec("DROP TABLE IF EXISTS " + table);
        pg.exec("CREATE TABLE " + table + " (id TEXT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        pg.exec("INSERT INTO " + table + " (id, status) VALUES ('" + ROW + "', 'new')");
        // A row a newer holder wrote: every fence this test's leases carry is stale there.
        pg.exec("INSERT INTO " + table + " (id, status, fence_token) VALUES ('" + NEWER_ROW + "', 'new', " + HIGHEST.value() + ")");
    }

    private FencedWriter orders(LockObservations observations) {
        return FencedTable.builder(pg.schema.name(), "orders", "id", "fence_token").withTombstoneColumn("fence_deleted")
                .withMetrics(LockMetrics.none()).withObservations(observations).build().on(pg.ds);
    }

    @Test
    void everyFencedWriteInsideWithLockIsAChildOfItWithItsOperationAndOutcome() throws Exception {
        FencedWriter orders = orders(observations);
        List<String> lockIds = new ArrayList<>();
        locks.withLock(LOCK_KEY, TTL, Duration.ZERO, lease -> {
            lockIds.add(lease.lockId().value());
            FenceToken fence = lease.fence();
            assertThat(orders.claim(ROW, fence)).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(orders.update(ROW, fence, Assignments.of("status", "paid"))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(orders.update(NEWER_ROW, fence, Assignments.of("status", "paid"))).isInstanceOf(WriteOutcome.Stale.class);
            assertThat(orders.upsert(ROW, fence, Assignments.of("status", "shipped"))).isInstanceOf(WriteOutcome.Applied.class);
            Map<Object, WriteOutcome> all = orders.updateAll(List.of(ROW, NEWER_ROW), fence, Assignments.of("status", "late"));
            assertThat(all.get(ROW)).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(all.get(NEWER_ROW)).isInstanceOf(WriteOutcome.Stale.class);
            assertThat(orders.delete(ROW, fence)).isInstanceOf(WriteOutcome.Applied.class);
            return "done";
        });

        List<String> seen = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry)
                .forAllObservationsWithNameEqualTo(LockObservations.WRITE, o -> o
                        .hasParentObservationContextMatching(WITH_LOCK)
                        .hasLowCardinalityKeyValue("backend", "postgres")
                        .hasLowCardinalityKeyValue("resource.type", table))
                .hasHandledContextsThatSatisfy(contexts -> contexts.stream().filter(c -> c.getName().equals(LockObservations.WRITE))
                        .forEach(c -> seen.add(c.getLowCardinalityKeyValue("operation").getValue() + " "
                                + c.getLowCardinalityKeyValue("outcome").getValue())));
        assertThat(seen).containsExactly("claim applied", "update applied", "update stale", "upsert applied",
                "update_all stale", "delete applied");
        assertThat(allRecorded()).as("what the observations recorded").isNotEmpty()
                .noneMatch(v -> v.contains(lockIds.getFirst()))
                .noneMatch(v -> v.contains(LOCK_KEY))
                .noneMatch(v -> v.contains(ROW) || v.contains(NEWER_ROW));
    }

    @Test
    void aWriteTheDatabaseRefusesEndsWithOutcomeErrorAndTheErrorRecorded() throws Exception {
        FencedWriter orders = orders(observations);
        // No row, so the delete inserts a tombstone row, which status NOT NULL refuses.
        Observation request = Observation.start("http.request", registry);
        try (Observation.Scope scope = request.openScope()) {
            assertThatThrownBy(() -> orders.delete("order-absent", FenceToken.of(5))).isInstanceOf(FenceGuardException.class);
        } finally {
            request.stop();
        }
        TestObservationRegistryAssert.assertThat(registry)
                .hasObservationWithNameEqualTo(LockObservations.WRITE).that()
                .hasBeenStopped().hasParentObservationEqualTo(request)
                .hasLowCardinalityKeyValue("operation", "delete").hasLowCardinalityKeyValue("outcome", "error")
                .hasHighCardinalityKeyValue("fence", "5")
                .assertThatError().isInstanceOf(FenceGuardException.class);
    }

    @Test
    void aWriterWithoutObservationsObservesNothingEvenInsideAnObservedWithLock() throws Exception {
        FencedWriter orders = orders(LockObservations.none());
        locks.withLock(LOCK_KEY, TTL, Duration.ZERO, lease -> orders.update(ROW, lease.fence(), Assignments.of("status", "paid")).orThrow());

        TestObservationRegistryAssert.assertThat(registry)
                .hasObservationWithNameEqualTo("fenceguard.with.lock").that().hasBeenStopped()
                .backToTestObservationRegistry()
                .hasHandledContextsThatSatisfy(contexts -> assertThat(contexts).extracting(Observation.Context::getName)
                        .contains("fenceguard.acquire", "fenceguard.release").doesNotContain(LockObservations.WRITE));
        assertThat(pg.one("SELECT status FROM " + table + " WHERE id = '" + ROW + "'")).isEqualTo("paid");
    }

    @Test
    void argumentsRefusedBeforeAnySqlAreNotObserved() {
        FencedWriter orders = orders(observations);
        assertThatThrownBy(() -> orders.update("", HIGHEST, Assignments.of("status", "x"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> orders.updateAll(List.of(), HIGHEST, Assignments.of("status", "x")))
                .isInstanceOf(IllegalArgumentException.class);
        TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
    }

    /** Every name, contextual name, key value and error message the registry handled. */
    private List<String> allRecorded() {
        List<String> values = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> contexts.forEach(c -> {
            values.add(c.getName());
            values.add(String.valueOf(c.getContextualName()));
            c.getAllKeyValues().forEach(kv -> values.add(kv.getKey() + "=" + kv.getValue()));
            if (c.getError() != null) {
                values.add(String.valueOf(c.getError().getMessage()));
            }
        }));
        return values;
    }
}
