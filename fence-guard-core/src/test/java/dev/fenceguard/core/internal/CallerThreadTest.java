package dev.fenceguard.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Which threads a blocking face may lend to its call (issue #31), and that the mark is taken once and gone
 * after. The JDBC side, where the mark is taken, is tested on PostgreSQL (PostgresCallsAreBoundedTest).
 */
class CallerThreadTest {

    @Test
    void aPlatformThreadIsLentToTheFirstCallOnlyAndTheMarkIsGoneAfterwards() {
        boolean[] taken = new boolean[2];
        CallerThread.lend(() -> {
            taken[0] = CallerThread.take();
            taken[1] = CallerThread.take();
            return null;
        });

        assertThat(taken).as("first call, second call").containsExactly(true, false);
        assertThat(CallerThread.take()).as("outside lend").isFalse();
    }

    @Test
    void aMarkNobodyTookIsGoneWhenLendReturns() {
        CallerThread.lend(() -> null);

        assertThat(CallerThread.take()).isFalse();
    }

    @Test
    void anInterruptedThreadIsNotLent() {
        Thread.currentThread().interrupt();
        boolean taken;
        try {
            taken = CallerThread.lend(CallerThread::take);
        } finally {
            assertThat(Thread.interrupted()).as("the interrupt, left as it was").isTrue();
        }

        assertThat(taken).isFalse();
    }

    @Test
    void aVirtualThreadIsNotLent() throws Exception {
        CompletableFuture<Boolean> taken = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> taken.complete(CallerThread.lend(CallerThread::take))).join();

        assertThat(taken.get()).isFalse();
    }

    @Test
    void theTimerThreadIsNotLent() throws Exception {
        CompletableFuture<Boolean> taken = new CompletableFuture<>();
        CompletableFuture<Boolean> onTimer = new CompletableFuture<>();
        Timer.schedule(Duration.ZERO, () -> {
            onTimer.complete(Timer.isTimerThread(Thread.currentThread()));
            taken.complete(CallerThread.lend(CallerThread::take));
        });

        assertThat(onTimer.get(10, TimeUnit.SECONDS)).as("ran on the timer thread").isTrue();
        assertThat(taken.get(10, TimeUnit.SECONDS)).isFalse();
        assertThat(Timer.isTimerThread(Thread.currentThread())).isFalse();
    }
}
