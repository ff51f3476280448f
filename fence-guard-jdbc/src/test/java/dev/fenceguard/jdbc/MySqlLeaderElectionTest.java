package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LeaderElectionContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Leader election on {@link MySqlLockBackend} (the test MariaDB through MySQL Connector/J), the leaders' writes
 * fenced by {@link FencedTable} (a fenced upsert).
 */
class MySqlLeaderElectionTest extends LeaderElectionContract {

    private static MariaTestSupport server;
    private static LockBackend backend;
    private static FencedWriter jobs;

    @BeforeAll
    static void setUp() throws Exception {
        server = new MariaTestSupport("my_election", "mysql", "");
        backend = server.mysqlBackend("locks").build();
        server.exec("CREATE TABLE " + server.q("jobs") + " (id VARCHAR(200) PRIMARY KEY, last_run TEXT, fence_token BIGINT NOT NULL DEFAULT 0)");
        jobs = FencedTable.builder(server.db.name(), "jobs", "id", "fence_token").withMetrics(LockMetrics.none()).build().on(server.ds);
    }

    @AfterAll
    static void tearDown() {
        server.close();
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
