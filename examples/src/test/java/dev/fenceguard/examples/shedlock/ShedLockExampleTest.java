package dev.fenceguard.examples.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.shedlock.FencedLockProvider;
import dev.fenceguard.testkit.servers.TestPostgres;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/** The samples of docs/shedlock.md and of FencedLockProvider's Javadoc, in Spring applications on the test PostgreSQL. */
class ShedLockExampleTest {

    private static TestPostgres.Schema schema;
    private static FenceGuardJdbc jdbc;
    private static LockClient locks;
    private static FencedTable reports;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("shedlock_docs");
        FenceGuardMigrations.builder(schema.dataSource()).withSchema(schema.name()).migrate();
        schema.execute("CREATE TABLE " + schema.name() + ".reports (id TEXT PRIMARY KEY, body TEXT NOT NULL DEFAULT '',"
                + " fence_token BIGINT NOT NULL DEFAULT 0)");
        schema.execute("INSERT INTO " + schema.name() + ".reports (id) VALUES ('hourly')");
        jdbc = FenceGuardJdbc.builder(schema.dataSource()).withSchema(schema.name()).build();
        locks = LockClient.of(jdbc.lockBackend());
        reports = FencedTable.builder(schema.name(), "reports", "id", "fence_token").withKeyType(String.class).build();
    }

    @AfterAll
    static void tearDown() {
        jdbc.close();
        schema.close();
    }

    @Test
    void eachRunOfTheScheduledJobWritesUnderItsOwnFenceAndAnEarlierFenceIsRefused() {
        try (AnnotationConfigApplicationContext app = new AnnotationConfigApplicationContext()) {
            app.registerBean(LockClient.class, () -> locks);
            app.registerBean(HourlyReport.class, () -> new HourlyReport(reports, schema.dataSource()));
            app.register(SchedulingConfig.class);
            app.refresh();
            HourlyReport job = app.getBean(HourlyReport.class);

            job.hourlyReport(); // what the scheduler calls at the top of the hour
            String first = schema.query("SELECT body || '|' || fence_token FROM " + schema.name() + ".reports").get(0);
            job.hourlyReport();
            String second = schema.query("SELECT body || '|' || fence_token FROM " + schema.name() + ".reports").get(0);
            long firstFence = Long.parseLong(first.substring(first.indexOf('|') + 1));
            long secondFence = Long.parseLong(second.substring(second.indexOf('|') + 1));
            assertThat(first).startsWith("report #1|");
            assertThat(second).startsWith("report #2|");
            assertThat(secondFence).isGreaterThan(firstFence);

            assertThat(reports.on(schema.dataSource()).update("hourly", FenceToken.of(firstFence), Assignments.of("body", "late")))
                    .as("a run that stalled with the first fence").isInstanceOf(WriteOutcome.Stale.class);
            assertThat(locks.lookup("hourly-report")).as("ShedLock unlocked after each run").isEmpty();
        }
    }

    @Test
    void theJavadocsBeanIsTheApplicationsLockProvider() {
        try (AnnotationConfigApplicationContext app = new AnnotationConfigApplicationContext()) {
            app.registerBean(LockClient.class, () -> locks);
            app.register(ProviderBean.class);
            app.refresh();
            assertThat(app.getBean(LockProvider.class)).isInstanceOfSatisfying(FencedLockProvider.class,
                    provider -> assertThat(provider.lockClient()).isSameAs(locks));
        }
    }
}
