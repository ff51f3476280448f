package dev.fenceguard.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Commands reach Lettuce from one thread at a time, in order, and no caller waits for another: a
 * caller that finds a command being handed over queues its own and returns; the thread handing over
 * sends it. Writes are simulated by suppliers the test holds on a latch.
 */
class OneWriterTest {

    private static final long WAIT_S = 30;

    private final OneWriter writer = new OneWriter();
    private final List<String> sent = new CopyOnWriteArrayList<>();
    private final AtomicInteger writing = new AtomicInteger();
    private final AtomicInteger mostAtOnce = new AtomicInteger();

    /** A command that records where and when it was sent, and holds there until {@code release} opens. */
    private Supplier<CompletionStage<String>> command(String name, CountDownLatch sending, CountDownLatch release) {
        return () -> {
            mostAtOnce.accumulateAndGet(writing.incrementAndGet(), Math::max);
            try {
                sent.add(name + " on " + Thread.currentThread().getName());
                sending.countDown();
                await(release);
                return CompletableFuture.completedFuture(name);
            } finally {
                writing.decrementAndGet();
            }
        };
    }

    @Test
    void aCommandSentWhileAnotherIsBeingWrittenIsQueuedAndSentByTheWritingThreadInOrder() throws Exception {
        CountDownLatch firstSending = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        CountDownLatch open = new CountDownLatch(0);
        CompletableFuture<CompletionStage<String>> first = new CompletableFuture<>();
        Thread writerThread = Thread.ofPlatform().name("first-caller").start(
                () -> first.complete(writer.send(command("first", firstSending, releaseFirst))));
        await(firstSending);

        // Both return at once, though the first command is still being written.
        CompletionStage<String> second = writer.send(command("second", new CountDownLatch(1), open));
        CompletionStage<String> third = writer.send(command("third", new CountDownLatch(1), open));
        assertThat(second.toCompletableFuture()).isNotDone();
        assertThat(third.toCompletableFuture()).isNotDone();
        assertThat(sent).containsExactly("first on first-caller");

        releaseFirst.countDown();
        writerThread.join(TimeUnit.SECONDS.toMillis(WAIT_S));
        assertThat(writerThread.isAlive()).isFalse();
        assertThat(first.get(WAIT_S, TimeUnit.SECONDS).toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(second.toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(third.toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS)).isEqualTo("third");
        assertThat(sent).as("sent in order, all by the thread that was writing")
                .containsExactly("first on first-caller", "second on first-caller", "third on first-caller");
        assertThat(mostAtOnce.get()).as("commands written at once").isEqualTo(1);
    }

    @Test
    void aCommandThatThrowsFailsItsStageAndLaterCommandsStillGo() throws Exception {
        CompletionStage<String> failed = writer.send(() -> {
            throw new IllegalStateException("connection closed");
        });
        assertThat(failed.toCompletableFuture()).isCompletedExceptionally();
        CompletionStage<String> erred = writer.send(() -> {
            throw new StackOverflowError("deep");
        });
        assertThat(erred.toCompletableFuture()).isCompletedExceptionally();
        CompletionStage<String> next = writer.send(() -> CompletableFuture.completedFuture("next"));
        assertThat(next.toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS)).isEqualTo("next");
    }

    @Test
    void manyCallersNeverWriteAtOnceAndEveryCommandIsSent() throws Exception {
        int threads = 8;
        int each = 2_000;
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<String>> answers = new CopyOnWriteArrayList<>();
        CountDownLatch open = new CountDownLatch(0);
        List<Thread> callers = new java.util.ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int caller = t;
            callers.add(Thread.ofPlatform().start(() -> {
                await(go);
                for (int i = 0; i < each; i++) {
                    answers.add(writer.send(command(caller + ":" + i, new CountDownLatch(1), open)).toCompletableFuture());
                }
            }));
        }
        go.countDown();
        for (Thread t : callers) {
            t.join(TimeUnit.SECONDS.toMillis(WAIT_S));
            assertThat(t.isAlive()).isFalse();
        }
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(WAIT_S, TimeUnit.SECONDS);
        assertThat(sent).hasSize(threads * each);
        assertThat(mostAtOnce.get()).as("commands written at once").isEqualTo(1);
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(WAIT_S, TimeUnit.SECONDS)) {
                throw new AssertionError("waited " + WAIT_S + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
