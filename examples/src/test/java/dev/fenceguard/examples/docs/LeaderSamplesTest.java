package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.Leadership;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.examples.docs.LeaderSamples.Scheduler;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs the leader election samples: a term's writes apply, and after the next term the old one's are refused. */
class LeaderSamplesTest {

    private static TestPostgres.Schema schema;
    private static FencedTable invoices;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("leadersamples");
        schema.execute("CREATE TABLE " + schema.name() + ".invoices (id BIGINT PRIMARY KEY, status TEXT NOT NULL, "
                + "fence_token BIGINT NOT NULL DEFAULT 0)");
        schema.execute("INSERT INTO " + schema.name() + ".invoices (id, status) VALUES (7, 'due'), (8, 'due')");
        invoices = FencedTable.builder(schema.name(), "invoices", "id", "fence_token").withKeyType(Long.class).build();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    /** The next term the scheduler was started with; the bound only ends a test that would otherwise hang. */
    private static Leadership nextTerm(Scheduler scheduler) throws InterruptedException {
        Leadership term = scheduler.terms.poll(60, TimeUnit.SECONDS);
        assertThat(term).as("elected").isNotNull();
        return term;
    }

    private String invoice(long id) {
        return schema.query("SELECT status || ' ' || fence_token FROM " + schema.name() + ".invoices WHERE id = " + id).getFirst();
    }

    @Test
    void theLeadersWritesCarryItsTermAndAnOldTermIsRefused() throws Exception {
        Scheduler scheduler = new Scheduler(schema.dataSource(), invoices);
        LeaderElection election = LeaderSamples.usage(new InMemoryLockBackend(), scheduler);
        try {
            Leadership first = nextTerm(scheduler);
            scheduler.send(7, first);
            assertThat(invoice(7)).isEqualTo("sent " + first.term().value());

            election.resign();   // the next term, as another candidate's would be
            Leadership second = nextTerm(scheduler);
            assertThat(second.term()).isGreaterThan(first.term());
            scheduler.send(7, second);
            assertThatThrownBy(() -> scheduler.send(7, first)).as("the deposed term's write").isInstanceOf(StaleFenceException.class);
            assertThat(invoice(7)).isEqualTo("sent " + second.term().value());
        } finally {
            election.stop();
        }
        assertThat(scheduler.stops).as("revoked on resign, then on stop").hasValue(2);
    }

    @Test
    void theJavadocCandidateSendsUnderItsTermAndStops() throws Exception {
        Scheduler scheduler = new Scheduler(schema.dataSource(), invoices);
        LockClient lockClient = LockClient.of(new InMemoryLockBackend());
        LeaderElection election = LeaderSamples.javadoc(lockClient, scheduler);
        try {
            Leadership term = nextTerm(scheduler);
            scheduler.sendInvoice(8, term);
            assertThat(invoice(8)).isEqualTo("sent " + term.term().value());
        } finally {
            election.stop();
        }
        assertThat(scheduler.stops).hasValue(1);
        assertThat(LeaderElection.currentLeader(lockClient, "billing-scheduler")).isEmpty();
    }
}
