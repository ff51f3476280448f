package dev.fenceguard.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.micrometer.MicrometerLockMetrics;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.firestore.FencedFirestore;
import dev.fenceguard.firestore.FirestoreLockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.redis.RedisLockBackend;
import dev.fenceguard.spring.internal.FencedLockAdvisor;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import dev.fenceguard.testkit.servers.Ports;
import dev.fenceguard.testkit.servers.TestPostgres;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** Every condition of the auto-configuration, on the real servers of fence-guard-testkit's harness. */
class FenceGuardAutoConfigurationTest {

    static final Duration TTL = Duration.ofSeconds(10);
    static final Duration WAIT = Duration.ofSeconds(5);
    static final String REDIS_PREFIX = TestRedis.keyPrefix("boot");

    static final AutoConfigurations FENCE_GUARD = AutoConfigurations.of(FenceGuardMetricsAutoConfiguration.class,
            FenceGuardRedisAutoConfiguration.class, FenceGuardFirestoreAutoConfiguration.class, FenceGuardFlywayAutoConfiguration.class,
            FenceGuardAutoConfiguration.class, FenceGuardAnnotationAutoConfiguration.class, FenceGuardHealthAutoConfiguration.class);

    static TestPostgres.Schema schema;

    final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(FENCE_GUARD);

    @BeforeAll
    static void lockTable() {
        schema = TestServers.schema("boot");
        FenceGuardMigrations.builder(schema.dataSource()).withSchema(schema.name()).migrate();
    }

    @AfterAll
    static void cleanUp() {
        schema.close();
        TestServers.deleteRedisKeys(REDIS_PREFIX);
    }

    /** The application has a DataSource on the test schema, whose lock table exists. */
    ApplicationContextRunner postgres() {
        return postgres(schema);
    }

    static ApplicationContextRunner postgres(ApplicationContextRunner runner, TestPostgres.Schema schema) {
        return runner.withBean("dataSource", DataSource.class, schema::dataSource)
                .withPropertyValues("fence-guard.jdbc.schema=" + schema.name());
    }

    ApplicationContextRunner postgres(TestPostgres.Schema in) {
        return postgres(runner, in);
    }

    /** The application has a Lettuce RedisClient; fence-guard's keys go under a prefix of this test run. */
    ApplicationContextRunner redis(ApplicationContextRunner base) {
        return base.withBean(RedisClient.class, TestServers::redisClient, bd -> bd.setDestroyMethodName("shutdown"))
                .withPropertyValues("fence-guard.redis.key-prefix=" + REDIS_PREFIX + "l:", "fence-guard.redis.fence-key-prefix=" + REDIS_PREFIX + "f:");
    }

    static Optional<Long> lockOnce(LockClient client, String key) throws InterruptedException {
        return client.withLock(key, TTL, WAIT, (Lease lease) -> lease.fence().value());
    }

    @Test
    void withoutAStoreThereIsNoClient() {
        runner.run(ctx -> assertThat(ctx).hasNotFailed()
                .doesNotHaveBean(LockBackend.class)
                .doesNotHaveBean(LockClient.class)
                .doesNotHaveBean(FencedLockAdvisor.class)
                .doesNotHaveBean(FenceGuardHealthIndicator.class)
                .hasSingleBean(FenceGuardProperties.class));
    }

    @Test
    void aDataSourceGivesAPostgresClientOnTheConfiguredLockTable() {
        postgres().run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class).hasSingleBean(TransactionalFencedWrites.class)
                    .hasSingleBean(FencedLockAdvisor.class);
            assertThat(ctx.getBean(LockBackend.class).name()).isEqualTo("postgres");
            assertThat(lockOnce(ctx.getBean(LockClient.class), "boot:pg")).isPresent();
            assertThat(schema.query("SELECT count(*) FROM " + schema.name() + ".fence_guard_locks WHERE lock_key = 'boot:pg'"))
                    .containsExactly("1");
        });
    }

    @Test
    void anApplicationLockBackendIsWrappedAndNoStoreBackendIsBuilt() {
        InMemoryLockBackend own = new InMemoryLockBackend();
        postgres().withBean(LockBackend.class, () -> own).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(LockBackend.class)
                    .doesNotHaveBean(FenceGuardFlywayAutoConfiguration.CALLBACK_BEAN);
            assertThat(ctx.getBean(LockClient.class).backend()).isSameAs(own);
        });
    }

    @Test
    void theLockBackendIsWarmedUpByOneClientWarmUpAtStartup() {
        java.util.concurrent.atomic.AtomicInteger warmUps = new java.util.concurrent.atomic.AtomicInteger();
        LockBackend own = new WarmUpBackend(() -> {
            warmUps.incrementAndGet();
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        });
        assertThat(warmUps).as("nothing before the context starts").hasValue(0);
        postgres().withBean(LockBackend.class, () -> own).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(warmUps).as("warmed up by the startup, through one warm-up of the lock client (five rounds)").hasValue(5);
        });
    }

    @Test
    void aWarmUpThatFailsIsLoggedAndStartupGoesOn() {
        LockBackend failing = new WarmUpBackend(() -> java.util.concurrent.CompletableFuture.failedFuture(
                new dev.fenceguard.core.FenceGuardException(dev.fenceguard.core.ErrorCode.UNAVAILABLE, null, "store down")));
        postgres().withBean(LockBackend.class, () -> failing).run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class));
    }

    @Test
    void aWarmUpFailureOfAnotherTypeIsLoggedByClassNotByMessage() {
        // A backend of the application's own may fail with a driver's exception quoting data.
        String marker = "marker-" + java.util.UUID.randomUUID();
        LockBackend failing = new WarmUpBackend(() -> java.util.concurrent.CompletableFuture.failedFuture(
                new IllegalStateException("row (" + marker + ") refused")));
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream original = System.err;
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            postgres().withBean(LockBackend.class, () -> failing).run(ctx -> assertThat(ctx).hasNotFailed());
        } finally {
            System.setErr(original);
        }
        String logs = err.toString(java.nio.charset.StandardCharsets.UTF_8);
        original.print(logs);
        assertThat(logs).contains("could not warm up the lock client").contains("IllegalStateException").doesNotContain(marker);
    }

    @Test
    void withoutTheBackendModulesOnTheClassPathOnlyTheApplicationsBackendIsUsed() {
        // tried: a DataSource, a Redis client and a Firestore bean, with fence-guard-jdbc, -redis, -firestore,
        // -migrations and Flyway hidden from the class path
        InMemoryLockBackend own = new InMemoryLockBackend();
        redis(postgres()).withClassLoader(new FilteredClassLoader(FenceGuardJdbc.class, dev.fenceguard.jooq.FencedTable.class, FenceGuardRedis.class,
                        FenceGuardFirestore.class, FenceGuardMigrations.class, org.flywaydb.core.Flyway.class))
                .withBean(LockBackend.class, () -> own)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().doesNotHaveBean(FenceGuardRedis.class).doesNotHaveBean(TransactionalFencedWrites.class)
                            .doesNotHaveBean("fenceGuardJdbcLockTable").doesNotHaveBean(FenceGuardFlywayAutoConfiguration.CALLBACK_BEAN);
                    assertThat(ctx.getBean(LockClient.class).backend()).isSameAs(own);
                });
    }

    @Test
    void applicationBeansReplaceEachOfOurs() {
        LockMetrics metrics = LockMetrics.none();
        LockObservations observations = LockObservations.none();
        TransactionalFencedWrites writes = TransactionalFencedWrites.of(schema.dataSource());
        postgres().withBean(MeterRegistry.class, SimpleMeterRegistry::new).withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withBean(LockMetrics.class, () -> metrics).withBean(LockObservations.class, () -> observations)
                .withBean(TransactionalFencedWrites.class, () -> writes)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().doesNotHaveBean(MicrometerLockMetrics.class).doesNotHaveBean(MicrometerLockObservations.class);
                    assertThat(ctx.getBean(LockMetrics.class)).isSameAs(metrics);
                    assertThat(ctx.getBean(LockObservations.class)).isSameAs(observations);
                    assertThat(ctx.getBean(TransactionalFencedWrites.class)).isSameAs(writes);
                });
        redis(runner).withUserConfiguration(OwnRedis.class).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(FenceGuardRedis.class);
            assertThat(((RedisLockBackend) ctx.getBean(LockBackend.class)).keyPrefix()).isEqualTo(OwnRedis.PREFIX);
        });
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnRedis {
        static final String PREFIX = REDIS_PREFIX + "own:";

        @org.springframework.context.annotation.Bean
        FenceGuardRedis ownFenceGuardRedis(RedisClient client) {
            return FenceGuardRedis.builder(client).withKeyPrefix(PREFIX).withFenceKeyPrefix(REDIS_PREFIX + "ownf:").build();
        }
    }

    @Test
    void theFlywayCallbackIsLeftOutWhenTurnedOffOrWhenAnotherStoreHoldsTheLocks() {
        postgres().run(ctx -> assertThat(ctx).hasBean(FenceGuardFlywayAutoConfiguration.CALLBACK_BEAN));
        postgres().withPropertyValues("fence-guard.jdbc.flyway=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(FenceGuardFlywayAutoConfiguration.CALLBACK_BEAN));
        redis(postgres()).withPropertyValues("fence-guard.backend=redis")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(FenceGuardFlywayAutoConfiguration.CALLBACK_BEAN));
    }

    @Test
    void anApplicationLockClientReplacesOurs() {
        LockClient own = LockClient.of(new InMemoryLockBackend());
        postgres().withBean(LockClient.class, () -> own).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class);
            assertThat(ctx.getBean(LockClient.class)).isSameAs(own);
        });
    }

    @Test
    void aLettuceClientGivesARedisClientAndFencedRedis() {
        redis(runner).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(FenceGuardRedis.class).hasSingleBean(FencedRedis.class);
            assertThat(ctx.getBean(LockBackend.class)).isInstanceOf(RedisLockBackend.class);
            assertThat(((RedisLockBackend) ctx.getBean(LockBackend.class)).keyPrefix()).isEqualTo(REDIS_PREFIX + "l:");
            long fence = lockOnce(ctx.getBean(LockClient.class), "boot:redis").orElseThrow();
            FencedRedis writes = ctx.getBean(FencedRedis.class);
            assertThat(writes.set(REDIS_PREFIX + "r:order", dev.fenceguard.core.FenceToken.of(fence), "paid"))
                    .isInstanceOf(WriteOutcome.Applied.class);
        });
    }

    @Test
    void springDataRedisConnectionFactoryGivesARedisClient() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class)).withConfiguration(FENCE_GUARD)
                .withPropertyValues("spring.data.redis.url=" + TestServers.redisUrl(), "fence-guard.redis.key-prefix=" + REDIS_PREFIX + "sd:",
                        "fence-guard.redis.fence-key-prefix=" + REDIS_PREFIX + "sdf:")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(LettuceConnectionFactory.class).hasSingleBean(FenceGuardRedis.class);
                    assertThat(ctx.getBean(LockBackend.class)).isInstanceOf(RedisLockBackend.class);
                    assertThat(lockOnce(ctx.getBean(LockClient.class), "boot:spring-data")).isPresent();
                });
    }

    @Test
    void aFirestoreBeanGivesAFirestoreClientAndFencedFirestore() {
        runner.withBean(Firestore.class, () -> TestServers.firestore("boot"), bd -> bd.setDestroyMethodName("close")).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(FenceGuardFirestore.class).hasSingleBean(FencedFirestore.class);
            assertThat(ctx.getBean(LockBackend.class)).isInstanceOf(FirestoreLockBackend.class);
            assertThat(lockOnce(ctx.getBean(LockClient.class), "boot:firestore")).isPresent();
        });
    }

    @Test
    void aRedisHorizonHoldsTheFencedWritesOfTheBeanToIt() {
        // tried: a set of an absent key with fence 1 (far below any clock-floored horizon), with and without the property
        redis(runner).withPropertyValues("fence-guard.redis.horizon=1h", "fence-guard.redis.clock-margin=1m").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            WriteOutcome o = ctx.getBean(FencedRedis.class).set(REDIS_PREFIX + "r:horizon", FenceToken.of(1), "v");
            assertThat(o).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                    s -> assertThat(s.reason()).isEqualTo(WriteOutcome.Stale.Reason.BELOW_HORIZON));
        });
        redis(runner).run(ctx -> assertThat(ctx.getBean(FencedRedis.class).set(REDIS_PREFIX + "r:no-horizon", FenceToken.of(1), "v"))
                .as("no horizon: the write rule alone").isInstanceOf(WriteOutcome.Applied.class));
        redis(runner).withPropertyValues("fence-guard.redis.horizon=0s").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasStackTraceContaining("invalid fence-guard.redis.horizon 'PT0S'");
        });
    }

    @Test
    void aFirestoreHorizonHoldsTheFencedWritesToItAndMakesTheLockClockFloored() {
        ApplicationContextRunner firestore = runner.withBean(Firestore.class, () -> TestServers.firestore("boot-horizon"),
                bd -> bd.setDestroyMethodName("close"));
        firestore.withPropertyValues("fence-guard.firestore.horizon=1h", "fence-guard.firestore.clock-margin=1m").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            Firestore db = ctx.getBean(Firestore.class);
            WriteOutcome o = ctx.getBean(FencedFirestore.class).set(db.collection("orders").document("absent"), FenceToken.of(1),
                    Map.of("status", "new"));
            assertThat(o).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                    s -> assertThat(s.reason()).isEqualTo(WriteOutcome.Stale.Reason.BELOW_HORIZON));
            assertThat(lockOnce(ctx.getBean(LockClient.class), "boot:firestore-horizon")).as("a clock-floored fence")
                    .hasValueSatisfying(fence -> assertThat(fence).isGreaterThan(1_000_000_000L));
        });
        firestore.withPropertyValues("fence-guard.firestore.horizon=1h", "fence-guard.fence-strategy=DENSE").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasStackTraceContaining("invalid fence-guard.firestore settings");
        });
        firestore.withPropertyValues("fence-guard.firestore.clock-margin=2d").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasStackTraceContaining("invalid fence-guard.firestore.clock-margin 'PT48H'");
        });
    }

    @Test
    void severalStoresNeedFenceGuardBackend() {
        redis(postgres()).run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                .hasMessageContaining("several possible lock backends: jdbc (a DataSource bean), redis (a Redis client)")
                .hasMessageContaining("set fence-guard.backend"));
        redis(postgres()).withPropertyValues("fence-guard.backend=redis").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(LockBackend.class)).isInstanceOf(RedisLockBackend.class);
        });
        redis(postgres()).withPropertyValues("fence-guard.backend=jdbc").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(LockBackend.class).name()).isEqualTo("postgres");
        });
    }

    @Test
    void fenceGuardBackendNamingAStoreTheApplicationLacksFailsStartup() {
        postgres().withPropertyValues("fence-guard.backend=firestore").run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("fence-guard.backend is firestore, but the application has no Firestore bean"));
        runner.withPropertyValues("fence-guard.backend=redis").run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("fence-guard.backend is redis, but the application has no Lettuce RedisClient"));
    }

    @Test
    void lockMetersGoToTheApplicationsMeterRegistry() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        postgres().withBean(MeterRegistry.class, () -> registry).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(MicrometerLockMetrics.class);
            lockOnce(ctx.getBean(LockClient.class), "boot:metered");
            assertThat(registry.find("fenceguard.lock.acquire").tag("backend", "postgres").timers()).isNotEmpty();
        });
        postgres().withBean(MeterRegistry.class, SimpleMeterRegistry::new).withPropertyValues("fence-guard.metrics.enabled=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(LockMetrics.class));
        postgres().run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(LockMetrics.class));
    }

    @Test
    void observationsGoThroughTheApplicationsObservationRegistry() {
        postgres().withBean(ObservationRegistry.class, ObservationRegistry::create)
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(MicrometerLockObservations.class));
        postgres().withBean(ObservationRegistry.class, ObservationRegistry::create).withPropertyValues("fence-guard.observations.enabled=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(LockObservations.class));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "fence-guard.default-ttl=0s; fence-guard.default-ttl; ttl must be at least 1 ms",
        "fence-guard.default-ttl=31d; fence-guard.default-ttl; ttl must be at most PT720H",
        "fence-guard.default-wait=-1s; fence-guard.default-wait; maxWait must not be negative",
        "fence-guard.call-timeout=1h; fence-guard.call-timeout; must be between 1 ms and 10 minutes",
        "fence-guard.release-timeout=0ms; fence-guard.release-timeout; must be between 1 ms and 10 minutes",
        "fence-guard.jdbc.table=no such table; fence-guard.jdbc.table; table",
        "fence-guard.jdbc.schema=1x; fence-guard.jdbc.schema; schema",
        "fence-guard.jdbc.database=h2; fence-guard.jdbc.database; h2",
        "fence-guard.redis.call-timeout=0s; fence-guard.redis.call-timeout; must be positive",
        "fence-guard.backend=mysql; fence-guard.backend; mysql",
        "fence-guard.default-ttl=soon; fence-guard.default-ttl; soon"})
    void anInvalidPropertyFailsStartupNamingIt(String setting, String property, String problem) {
        postgres().withPropertyValues(setting).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasStackTraceContaining(property).hasStackTraceContaining(problem);
        });
    }

    @Test
    void aRedisSettingTheModuleRefusesFailsStartupNamingIt() {
        redis(runner).withPropertyValues("fence-guard.redis.key-prefix=lock{s}").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasStackTraceContaining("invalid fence-guard.redis.key-prefix 'lock{s}'");
        });
        redis(runner).withPropertyValues("fence-guard.redis.key-prefix=same:", "fence-guard.redis.fence-key-prefix=same:").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasStackTraceContaining("invalid fence-guard.redis settings");
        });
    }

    @Test
    void healthIsUpWhenTheBackendAnswersAndCanBeTurnedOff() {
        postgres().run(ctx -> {
            Health health = ctx.getBean(FenceGuardHealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).isEqualTo(Map.of("backend", "postgres"));
        });
        postgres().withPropertyValues("management.health.fenceguard.enabled=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(FenceGuardHealthIndicator.class));
    }

    @Test
    void healthIsDownWithTheErrorCodeWhenTheBackendDoesNotAnswer() {
        PGSimpleDataSource nowhere = new PGSimpleDataSource();
        nowhere.setURL("jdbc:postgresql://127.0.0.1:" + Ports.refused() + "/test?user=postgres&connectTimeout=2");
        // the database named, so that startup need not ask the DataSource that does not answer
        runner.withBean("dataSource", DataSource.class, () -> nowhere)
                .withPropertyValues("fence-guard.jdbc.verify-table=false", "fence-guard.jdbc.database=postgresql")
                .run(ctx -> {
                    Health health = ctx.getBean(FenceGuardHealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(health.getDetails()).containsEntry("backend", "postgres").containsEntry("error", "UNAVAILABLE");
                });
    }

    @Test
    void aMissingLockTableFailsStartupWhenFlywayDoesNotCreateIt() {
        try (TestPostgres.Schema empty = TestServers.schema("bootempty")) {
            postgres(empty).run(ctx -> assertThat(ctx).hasFailed().getFailure()
                    .hasMessageContaining("fence-guard's lock table \"" + empty.name() + "\".\"fence_guard_locks\" does not exist")
                    .hasMessageContaining("Spring Boot's Flyway does not create it"));
            postgres(empty).withPropertyValues("fence-guard.jdbc.verify-table=false").run(ctx -> assertThat(ctx).hasNotFailed());
        }
    }

    @Test
    void springBootsFlywayRunCreatesTheLockTableBesideTheApplicationsOwnV1() {
        try (TestPostgres.Schema empty = TestServers.schema("bootflyway")) {
            postgres(runner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class)), empty).run(ctx -> {
                assertThat(ctx).hasNotFailed().hasBean(FenceGuardFlywayAutoConfiguration.CALLBACK_BEAN);
                assertThat(lockOnce(ctx.getBean(LockClient.class), "boot:flyway")).isPresent();
            });
            assertThat(empty.query("SELECT table_name FROM information_schema.tables WHERE table_schema = '" + empty.name()
                    + "' ORDER BY table_name")).containsExactly("app_orders", "fence_guard_history_fence_guard_locks", "fence_guard_lock_floors", "fence_guard_locks",
                            "flyway_schema_history");
        }
    }

    @Test
    void withSpringBootsFlywayTurnedOffAMissingLockTableFailsStartup() {
        try (TestPostgres.Schema empty = TestServers.schema("bootnoflyway")) {
            postgres(runner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class)), empty)
                    .withPropertyValues("spring.flyway.enabled=false")
                    .run(ctx -> assertThat(ctx).hasFailed().getFailure()
                            .hasMessageContaining("does not exist and Spring Boot's Flyway does not create it"));
        }
    }

    /** An in-memory backend whose warm-up the test decides. */
    private record WarmUpBackend(java.util.function.Supplier<java.util.concurrent.CompletionStage<Void>> warmUp,
            InMemoryLockBackend store) implements LockBackend {
        WarmUpBackend(java.util.function.Supplier<java.util.concurrent.CompletionStage<Void>> warmUp) {
            this(warmUp, new InMemoryLockBackend());
        }

        @Override public String name() { return store.name(); }
        @Override public java.util.concurrent.CompletionStage<java.util.Optional<dev.fenceguard.core.spi.Grant>> tryAcquire(
                dev.fenceguard.core.LockKey key, dev.fenceguard.core.LockId lockId, java.time.Duration ttl, java.time.Duration timeout) {
            return store.tryAcquire(key, lockId, ttl, timeout);
        }
        @Override public java.util.concurrent.CompletionStage<Boolean> release(dev.fenceguard.core.LockKey key,
                dev.fenceguard.core.LockId lockId, java.time.Duration timeout) {
            return store.release(key, lockId, timeout);
        }
        @Override public java.util.concurrent.CompletionStage<java.util.Optional<java.time.Instant>> extend(dev.fenceguard.core.LockKey key,
                dev.fenceguard.core.LockId lockId, java.time.Duration ttl, java.time.Duration timeout) {
            return store.extend(key, lockId, ttl, timeout);
        }
        @Override public java.util.concurrent.CompletionStage<java.util.Optional<dev.fenceguard.core.LockInfo>> lookup(
                dev.fenceguard.core.LockKey key, java.time.Duration timeout) {
            return store.lookup(key, timeout);
        }
        @Override public java.util.concurrent.CompletionStage<Void> warmUp(java.time.Duration timeout) {
            return warmUp.get();
        }
    }
}
