package dev.fenceguard.jooq;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.LeaderElectionContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Leader election on a backend of the MySQL/MariaDB lock table, in a database of its own, the leaders' writes
 * fenced by {@link FencedTable} (a fenced upsert).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LockTableLeaderElection extends LeaderElectionContract {

    private MariaTestSupport server;
    private LockBackend backend;
    private FencedWriter jobs;

    /** A database of its own, through the driver under test. */
    abstract MariaTestSupport newServer();

    /** The backend under test on a migrated table {@code locks} of {@code server}. */
    abstract LockBackend backendOn(MariaTestSupport server);

    @BeforeAll
    void setUp() throws Exception {
        server = newServer();
        backend = backendOn(server);
        server.exec("CREATE TABLE " + server.q("jobs") + " (id VARCHAR(200) PRIMARY KEY, last_run TEXT, fence_token BIGINT NOT NULL DEFAULT 0)");
        jobs = FencedTable.builder(server.db.name(), "jobs", "id", "fence_token").withMetrics(LockMetrics.none()).build().on(server.ds);
    }

    @AfterAll
    void tearDown() {
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
