package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.examples.docs.LockFacesSamples.ReactorMonos;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Runs the samples of the lock client's faces on the in-memory backend. */
class LockFacesSamplesTest {

    private final LockFacesSamples samples = new LockFacesSamples(LockClient.of(new InMemoryLockBackend()));

    @Test
    void readmeAsyncFaceMarksTheOrderPaidUnderTheLockAndReleasesIt() {
        samples.readmeAsync().toCompletableFuture().join();
        assertThat(samples.orderService.orders.get(42L).status()).isEqualTo("paid");
        assertThat(samples.free("orders:42")).isTrue();
    }

    @Test
    void readmeReactorFaceIsLazyThenMarksTheOrderPaid() {
        var paid = samples.readmeReactor();
        assertThat(samples.orderRepository.orders).as("nothing happens before subscribing").isEmpty();
        assertThat(paid.block(Duration.ofSeconds(30))).satisfies(o -> assertThat(o.status()).isEqualTo("paid"));
        assertThat(samples.free("orders:42")).isTrue();
    }

    @Test
    void asyncAndBoundsReactorMonosEachDoWhatTheirCommentSays() {
        ReactorMonos m = samples.asyncAndBoundsReactor();
        assertThat(m.released().block(Duration.ofSeconds(30))).as("took reports:daily, released it").isTrue();
        assertThat(samples.free("reports:daily")).isTrue();
        assertThat(m.bothReleased().block(Duration.ofSeconds(30))).isTrue();
        assertThat(samples.free("a")).isTrue();
        assertThat(m.paid().block(Duration.ofSeconds(30)).fence()).isNotNull();
        var lease = m.waited().block(Duration.ofSeconds(30));
        assertThat(lease.isValid()).isTrue();
        assertThat(samples.free("orders:42")).isFalse();
        lease.close();
        assertThat(samples.free("orders:42")).isTrue();
    }
}
