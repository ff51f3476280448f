package dev.fenceguard.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.servers.TestPostgres;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The scheduled purge in an application context on PostgreSQL: off by default; on, it purges the
 * application's targets round after round, resuming each from its cursor, logging and metering a target
 * that fails while the others go on; bad settings fail startup naming the property. Rounds are awaited
 * through the schedule's own count of ended rounds, never by sleeping.
 */
class FencePurgeScheduleTest {

    static final Duration BOUND = Duration.ofMinutes(1);
    static TestPostgres.Schema schema;
    static FencedTable items;
    static String table;

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FenceGuardPurgeAutoConfiguration.class))
            .withBean("dataSource", DataSource.class, () -> schema.dataSource());

    @BeforeAll
    static void createTable() {
        schema = TestServers.schema("bootpurge");
        table = schema.name() + ".items";
        items = FencedTable.builder(schema.name(), "items", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withHorizon(Duration.ofHours(1)).withMetrics(LockMetrics.none()).build();
    }

    @AfterAll
    static void dropSchema() {
        schema.close();
    }

    /** Tombstones 1..6 with fence 100 (long purgeable), live row 7 with fence 100, tombstone 8 with a fence an hour ahead. */
    @BeforeEach
    void rows() {
        long ahead = ClockFloor.floorAt(System.currentTimeMillis()) + 3_600_000L * ClockFloor.PER_MILLISECOND;
        schema.execute("DROP TABLE IF EXISTS " + table);
        schema.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, body TEXT, fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        schema.execute("INSERT INTO " + table + " (id, fence_token, fence_deleted) SELECT g, 100, TRUE FROM generate_series(1, 6) g");
        schema.execute("INSERT INTO " + table + " (id, body, fence_token) VALUES (7, 'live', 100)");
        schema.execute("INSERT INTO " + table + " (id, fence_token, fence_deleted) VALUES (8, " + ahead + ", TRUE)");
    }

    private List<String> ids() {
        return schema.query("SELECT id FROM " + table + " ORDER BY id");
    }

    @Test
    void offByDefault() {
        runner.withBean(FencePurges.class, () -> FencePurges.of("items", items.on(schema.dataSource())::purge))
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(FencePurgeSchedule.class));
    }

    @Test
    void purgesRoundAfterRoundResumingFromTheCursorAndMetered() {
        List<Optional<Object>> startedAfter = new CopyOnWriteArrayList<>();
        List<PurgeResult> results = new CopyOnWriteArrayList<>();
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(FencePurges.class, () -> FencePurges.of("items", purge -> {
                    startedAfter.add(purge.startAfter());
                    PurgeResult r = items.on(schema.dataSource()).purge(purge);
                    results.add(r);
                    return r;
                }))
                // Batches of 2 and a bound every batch passes: each round removes one batch and stops there.
                .withPropertyValues("fence-guard.purge.enabled=true", "fence-guard.purge.interval=10ms",
                        "fence-guard.purge.batch-size=2", "fence-guard.purge.max-duration=1ns")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(FencePurgeSchedule.class);
                    FencePurgeSchedule schedule = ctx.getBean(FencePurgeSchedule.class);
                    assertThat(schedule.awaitRounds(5, BOUND)).as("five rounds ended").isTrue();
                    assertThat(ids()).containsExactly("7", "8");
                    List<Optional<Object>> started = List.copyOf(startedAfter); // rounds go on meanwhile: read a copy
                    List<PurgeResult> ended = List.copyOf(results);
                    assertThat(started.subList(0, 4)).containsExactly(Optional.empty(), Optional.of(2L), Optional.of(4L), Optional.of(6L));
                    assertThat(ended.subList(0, 4)).extracting(PurgeResult::removed).containsExactly(2L, 2L, 2L, 0L);
                    assertThat(ended.get(3).complete()).as("the fourth round went through: the next starts again from the first key").isTrue();
                    assertThat(started.get(4)).isEmpty();
                    MeterRegistry meters = ctx.getBean(MeterRegistry.class);
                    assertThat(meters.get("fenceguard.purge.run").tags("target", "items", "outcome", "stopped").timer().count()).isEqualTo(3);
                    assertThat(meters.get("fenceguard.purge.run").tags("target", "items", "outcome", "complete").timer().count())
                            .isGreaterThanOrEqualTo(2);
                });
    }

    @Test
    void aTargetThatFailsIsLoggedMeteredAndTriedAgainWhileTheOthersRun() {
        AtomicInteger calls = new AtomicInteger();
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean("broken", FencePurges.class, () -> FencePurges.of("broken", purge -> {
                    if (calls.incrementAndGet() == 1) {
                        throw new IllegalStateException("the store is down");
                    }
                    return new PurgeResult(0, 1, true, Optional.empty());
                }))
                .withBean("fine", FencePurges.class, () -> FencePurges.of("items", items.on(schema.dataSource())::purge))
                .withPropertyValues("fence-guard.purge.enabled=true", "fence-guard.purge.interval=10ms")
                .run(ctx -> {
                    FencePurgeSchedule schedule = ctx.getBean(FencePurgeSchedule.class);
                    assertThat(schedule.targets()).containsOnlyKeys("broken", "items");
                    assertThat(schedule.awaitRounds(2, BOUND)).isTrue();
                    assertThat(ids()).as("the first round purged items although 'broken' failed before it").containsExactly("7", "8");
                    assertThat(calls.get()).isGreaterThanOrEqualTo(2);
                    MeterRegistry meters = ctx.getBean(MeterRegistry.class);
                    assertThat(meters.get("fenceguard.purge.run").tags("target", "broken", "outcome", "failed").timer().count()).isEqualTo(1);
                    assertThat(meters.get("fenceguard.purge.run").tags("target", "broken", "outcome", "complete").timer().count())
                            .isGreaterThanOrEqualTo(1);
                });
    }

    @Test
    void withoutTargetsItStartsAndPurgesNothing() {
        runner.withPropertyValues("fence-guard.purge.enabled=true", "fence-guard.purge.interval=10ms")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(FencePurgeSchedule.class).targets()).isEmpty();
                    assertThat(ids()).hasSize(8);
                });
    }

    @Test
    void aTargetNamedTwiceFailsStartup() {
        runner.withBean("a", FencePurges.class, () -> FencePurges.of("items", p -> null))
                .withBean("b", FencePurges.class, () -> FencePurges.of("items", p -> null))
                .withPropertyValues("fence-guard.purge.enabled=true")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .hasMessage("purge target 'items' is named by more than one FencePurges bean"));
        assertThatThrownBy(() -> FencePurges.of("items", p -> null).and("items", p -> null))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("purge target 'items' is named twice");
        assertThatThrownBy(() -> FencePurges.of(" ", p -> null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a purge target's name must be 1 to 100 characters, not blank, was ' '");
    }

    @Test
    void badSettingsFailStartupNamingTheProperty() {
        runner.withPropertyValues("fence-guard.purge.enabled=true", "fence-guard.purge.batch-size=0")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().message()
                        .contains("invalid fence-guard.purge.batch-size '0': batchSize must be between 1 and 100000, was 0"));
        runner.withPropertyValues("fence-guard.purge.enabled=true", "fence-guard.purge.interval=0s")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().message()
                        .contains("invalid fence-guard.purge.interval 'PT0S': must be positive, was PT0S"));
        runner.withPropertyValues("fence-guard.purge.enabled=true", "fence-guard.purge.max-duration=-1s")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().message()
                        .contains("invalid fence-guard.purge.max-duration 'PT-1S': maxDuration must be positive, was PT-1S"));
    }
}
