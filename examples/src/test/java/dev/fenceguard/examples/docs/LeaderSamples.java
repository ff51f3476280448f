package dev.fenceguard.examples.docs;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.Leadership;
import dev.fenceguard.core.leader.LeadershipListener;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** The samples of docs/leader-election.md and of the Javadoc of {@code LeaderElection}. */
final class LeaderSamples {

    private LeaderSamples() {}

    /** The scheduler the elections start and stop: it hands each term to the test, and sends invoices under it. */
    static final class Scheduler {
        private final DataSource dataSource;
        private final FencedTable invoices;
        final BlockingQueue<Leadership> terms = new LinkedBlockingQueue<>();
        final AtomicInteger stops = new AtomicInteger();

        Scheduler(DataSource dataSource, FencedTable invoices) {
            this.dataSource = dataSource;
            this.invoices = invoices;
        }

        void start(Leadership term) {
            terms.add(term);
        }

        void stop() {
            stops.incrementAndGet();
        }

        void startRunning(Leadership term) {
            start(term);
        }

        void stopRunning() {
            stop();
        }

        // docs/leader-election.md: send under the term (begin)
        void send(long invoiceId, Leadership term) {
            invoices.on(dataSource).update(invoiceId, term.term(), Assignments.of("status", "sent")).orThrow();
        }
        // docs/leader-election.md: send under the term (end)

        // dev/fenceguard/core/leader/LeaderElection.java: send under the term (begin)
        void sendInvoice(long id, Leadership term) {
            invoices.on(dataSource).update(id, term.term(), Assignments.of("status", "sent")).orThrow();
        }
        // dev/fenceguard/core/leader/LeaderElection.java: send under the term (end)
    }

    static LeaderElection usage(LockBackend backend, Scheduler scheduler) {
        // docs/leader-election.md: usage (begin)
        LockClient locks = LockClient.of(backend);
        LeaderElection election = LeaderElection.builder(locks, "invoice-scheduler")
                .withTtl(Duration.ofSeconds(15))          // a dead leader is replaced after at most this long
                .onEvents(new LeadershipListener() {
                    @Override public void elected(Leadership term) { scheduler.start(term); }
                    @Override public void revoked(Leadership term, Revocation why) { scheduler.stop(); }
                })
                .build();
        election.start();
        // docs/leader-election.md: usage (end)
        return election;
    }

    static LeaderElection javadoc(LockClient lockClient, Scheduler scheduler) {
        // dev/fenceguard/core/leader/LeaderElection.java: campaign (begin)
        LeaderElection election = LeaderElection.builder(lockClient, "billing-scheduler")
                .withTtl(Duration.ofSeconds(15))
                .onEvents(new LeadershipListener() {
                    public void elected(Leadership term) { scheduler.startRunning(term); }
                    public void revoked(Leadership term, Revocation why) { scheduler.stopRunning(); }
                })
                .build();
        election.start();
        // dev/fenceguard/core/leader/LeaderElection.java: campaign (end)
        return election;
    }
}
