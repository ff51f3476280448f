package dev.fenceguard.jooq;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.LeaderElectionContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Leader election on PostgreSQL, the leaders' writes fenced by {@link FencedTable} (a fenced upsert). */
class PostgresLeaderElectionTest extends LeaderElectionContract {

    private static PgTestSupport pg;
    private static LockBackend backend;
    private static FencedWriter jobs;

    @BeforeAll
    static void setUp() throws Exception {
        pg = new PgTestSupport("election");
        backend = pg.lockBackend("locks");
        pg.exec("CREATE TABLE " + pg.q("jobs") + " (id TEXT PRIMARY KEY, last_run TEXT, fence_token BIGINT NOT NULL DEFAULT 0)");
        jobs = FencedTable.builder(pg.schema.name(), "jobs", "id", "fence_token").withMetrics(LockMetrics.none()).build().on(pg.ds);
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Override
    protected LockBackend backend() {
        return backend;
    }

    @Override
    protected WriteOutcome write(String resource, FenceToken term) {
        return jobs.upsert(resource, term, Assignments.of("last_run", "term " + term.value()));
    }
}
