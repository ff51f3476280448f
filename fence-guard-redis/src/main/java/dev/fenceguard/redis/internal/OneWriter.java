package dev.fenceguard.redis.internal;

import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Hands fence-guard's commands to Lettuce one at a time, without making any caller wait.
 *
 * <p>Why: Lettuce's endpoint takes a lock for every command it writes ({@code SharedLock}, a
 * {@code ReentrantLock} in Lettuce 7), on the thread that sends the command. Two threads writing to one
 * connection at once make one of them park there, which on an event loop or a Reactor thread is a
 * blocking call. Here a caller that finds no other command being handed over sends its own at once, on
 * its own thread, as before; a caller that finds one under way queues its command and returns, and the
 * thread handing over sends it next (the usual work-in-progress drain: the count says how many commands
 * are queued or being sent, and whoever raises it from zero drains). So fence-guard never writes to
 * the connection from two threads at once, and Lettuce's lock is never contended by fence-guard: a
 * thread parks there only while Lettuce itself holds the lock exclusively (reconnecting, closing) or
 * while the application writes to the same connection from another thread (see docs/redis.md).
 *
 * <p>Order is kept: commands are handed over in the order they were queued. A thread that drains may
 * send other callers' commands too, each a non-blocking write into Netty; callers send their next
 * command only when the last is answered, so a drain ends once the callers wait for Redis.
 */
final class OneWriter {

    private final Queue<Runnable> queued = new ConcurrentLinkedQueue<>();
    /** Commands queued or being sent; the thread that raises it from zero sends until it is zero again. */
    private final AtomicInteger pending = new AtomicInteger();

    /** Sends {@code command} now, or after the commands already being handed over; never waits. */
    <T> CompletionStage<T> send(Supplier<? extends CompletionStage<T>> command) {
        if (pending.compareAndSet(0, 1)) { // nobody else is writing: no queue, no extra future
            CompletionStage<T> sent = sendNow(command);
            drain();
            return sent;
        }
        CompletableFuture<T> out = new CompletableFuture<>();
        queued.add(() -> sendNow(command).whenComplete((value, error) -> {
            if (error == null) {
                out.complete(value);
            } else {
                out.completeExceptionally(error);
            }
        }));
        if (pending.getAndIncrement() == 0) {
            queued.poll().run();
            drain();
        }
        return out;
    }

    /** Sends what others queued meanwhile, until nothing is left; the caller's own command is sent. */
    private void drain() {
        while (pending.decrementAndGet() != 0) {
            queued.poll().run(); // every count above zero stands for a command already added to the queue
        }
    }

    /**
     * Lettuce reports most failures through the future, but a closed connection can throw at once. Any
     * throwable becomes the command's failure: one escaping here would leave the count above zero and
     * every later command queued for good.
     */
    private static <T> CompletionStage<T> sendNow(Supplier<? extends CompletionStage<T>> command) {
        try {
            return command.get();
        } catch (Throwable e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
