package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LeaderElectionContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Leader election on MariaDB, the leaders' writes fenced by {@link FencedTable} (a fenced upsert). */
class MariaDbLeaderElectionTest extends LeaderElectionContract {

    private static MariaTestSupport maria;
    private static LockBackend backend;
    private static FencedWriter jobs;

    @BeforeAll
    static void setUp() throws Exception {
        maria = new MariaTestSupport("election");
        backend = maria.backend("locks").build();
        maria.exec("CREATE TABLE " + maria.q("jobs") + " (id VARCHAR(200) PRIMARY KEY, last_run TEXT, fence_token BIGINT NOT NULL DEFAULT 0)");
        jobs = FencedTable.builder(maria.db.name(), "jobs", "id", "fence_token").withMetrics(LockMetrics.none()).build().on(maria.ds);
    }

    @AfterAll
    static void tearDown() {
        maria.close();
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
