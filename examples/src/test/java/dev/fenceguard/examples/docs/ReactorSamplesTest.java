package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.leader.LeaderInfo;
import dev.fenceguard.core.leader.Leadership;
import dev.fenceguard.core.leader.LeadershipListener;
import dev.fenceguard.examples.docs.ReactorSamples.ElectionMonos;
import dev.fenceguard.examples.docs.ReactorSamples.LockClientMonos;
import dev.fenceguard.reactor.ReactiveLockClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Runs the samples of the reactor module's Javadoc over the Redis lock backend, idempotency backend and
 * flight store, on a private {@code redis-server} (the samples use fixed keys).
 */
class ReactorSamplesTest extends OnPrivateRedis {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void lockClientSampleSavesTheOrderWithTheFenceAndTriesTheDailyLock() {
        ReactorSamples.OrderRepository orders = new ReactorSamples.OrderRepository();
        LockClientMonos m = ReactorSamples.lockClient(redis.lockBackend(), orders, new ReactorSamples.Order(42, "paid", null));
        assertThat(orders.saved).as("nothing happens before subscribing").isEmpty();

        ReactorSamples.Order saved = m.saved().block(WAIT);
        assertThat(saved.fence()).isNotNull();
        assertThat(orders.saved.get(42L)).isEqualTo(saved);
        assertThat(locks.lookup("orders:42")).as("released").isEmpty();

        Lease daily = m.lease().block(WAIT);
        assertThat(daily.isValid()).isTrue();
        assertThat(m.lease().blockOptional(WAIT)).as("empty if held").isEmpty();
        daily.close();
        assertThat(locks.lookup("reports:daily")).isEmpty();
    }

    @Test
    void withLockSamplePaysTheInvoiceOrSaysItIsBusy() throws Exception {
        Mono<ReactorSamples.Invoice> paid = ReactorSamples.withLock(ReactiveLockClient.of(locks), new ReactorSamples.Invoices());
        ReactorSamples.Invoice invoice = paid.block(WAIT);
        assertThat(invoice.id()).isEqualTo(7);
        assertThat(invoice.fence()).isNotNull();

        try (Lease other = locks.acquire("invoices:7", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            assertThatThrownBy(() -> paid.block(WAIT)).as("after its 5 s wait").isInstanceOf(IllegalStateException.class)
                    .hasMessage("invoice 7 is busy");
        }
    }

    @Test
    void idempotencySampleChargesOnceAndReplaysTheCharge() throws Exception {
        ReactorSamples.Gateway gateway = new ReactorSamples.Gateway();
        try (Lease lease = locks.acquire("order:o-7", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            var charge = ReactorSamples.idempotency(redis.idempotencyBackend(), lease, gateway, "shop:o-7:charge", "o-7", "4200");
            assertThat(gateway.calls).as("lazy").hasValue(0);
            assertThat(charge.block(WAIT)).isInstanceOfSatisfying(IdempotencyResult.Executed.class,
                    r -> assertThat(r.value()).isEqualTo("ch_1 (4200)"));
            assertThat(charge.block(WAIT)).as("subscribed again: the recorded charge").isInstanceOfSatisfying(IdempotencyResult.Replayed.class,
                    r -> assertThat(r.value()).isEqualTo("ch_1 (4200)"));
        }
        assertThat(gateway.calls).hasValue(1);
    }

    @Test
    void leaderElectionSampleIsElectedAndStops() throws Exception {
        CompletableFuture<Leadership> elected = new CompletableFuture<>();
        CompletableFuture<LeadershipListener.Revocation> revoked = new CompletableFuture<>();
        LeadershipListener billing = new LeadershipListener() {
            @Override
            public void elected(Leadership leadership) {
                elected.complete(leadership);
            }

            @Override
            public void revoked(Leadership leadership, Revocation why) {
                revoked.complete(why);
            }
        };
        ElectionMonos m = ReactorSamples.leaderElection(locks, billing);
        Leadership leadership = elected.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        LeaderInfo leader = m.leader().block(WAIT);
        assertThat(leader.term()).isEqualTo(leadership.term());

        m.stopped().block(WAIT);
        assertThat(revoked.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(LeadershipListener.Revocation.STOPPED);
        assertThat(m.election().isRunning()).isFalse();
        assertThat(m.leader().blockOptional(WAIT)).as("the lock was released").isEmpty();
    }

    @Test
    void singleflightSampleBuildsTheReportOnceForTwoCallers() {
        ReactorSingleflightSamples.Reports reports = new ReactorSingleflightSamples.Reports();
        Mono<String> report = ReactorSingleflightSamples.singleflight(locks, redis.flightStore(), reports);
        assertThat(reports.calls).as("lazy").hasValue(0);
        var both = Mono.zip(report, report).block(WAIT);
        assertThat(both.getT1()).isEqualTo("report 2026-11 #1").isEqualTo(both.getT2());
        assertThat(reports.calls).hasValue(1);
    }
}
