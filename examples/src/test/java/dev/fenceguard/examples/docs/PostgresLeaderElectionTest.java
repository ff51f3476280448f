package dev.fenceguard.examples.docs;

import static dev.fenceguard.examples.docs.ContractFixtures.dataSource;
import static dev.fenceguard.examples.docs.ContractFixtures.jobs;
import static dev.fenceguard.examples.docs.ContractFixtures.postgresBackend;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.testkit.LeaderElectionContract;

/** The sample of {@link LeaderElectionContract}'s Javadoc: leaders on PostgreSQL, their runs a fenced upsert. */
// dev/fenceguard/testkit/LeaderElectionContract.java: subclass (begin)
class PostgresLeaderElectionTest extends LeaderElectionContract {
    protected LockBackend backend() { return postgresBackend; }
    protected WriteOutcome write(String resource, FenceToken term) {
        return jobs.on(dataSource).upsert(resource, term, Assignments.of("last_run", term.toString()));
    }
}
// dev/fenceguard/testkit/LeaderElectionContract.java: subclass (end)
