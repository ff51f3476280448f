package dev.fenceguard.reactor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;

/**
 * BlockHound, installed once for the test JVM, with every blocking call it catches also written down:
 * a blocking call inside a {@code CompletableFuture} callback would otherwise end as an exception
 * nobody looks at, and the test would pass.
 *
 * <p>Non-blocking threads: Reactor's ({@code Schedulers.parallel()}, from Reactor's own integration),
 * Netty's event loops, where Lettuce completes Redis calls (Netty's integration), and fence-guard's
 * timer thread, which sends retries, renewals and call deadlines and must never block either.
 *
 * <p>A blocking call on a non-blocking thread throws {@link BlockingOperationError} there; where that
 * thread is the timer, the task dies with it, so a test also fails by timing out on what it waited for.
 */
final class NoBlocking {

    private static final ConcurrentLinkedQueue<String> CAUGHT = new ConcurrentLinkedQueue<>();
    private static boolean installed;

    private NoBlocking() {}

    static synchronized void install() {
        if (installed) {
            return;
        }
        BlockHound.builder()
                .loadIntegrations()
                .nonBlockingThreadPredicate(p -> p.or(t -> t.getName().equals("fence-guard-timer")))
                // The timer thread waits for its next task here: idleness, not a task that blocks.
                .allowBlockingCallsInside("java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue", "take")
                // LockId.random() draws from SecureRandom, whose Linux default (NativePRNG) refills a small
                // buffer from /dev/urandom: a read that never waits once the kernel is seeded at boot. It
                // is the one file read allowed; BlockHoundIsArmedTest shows the rest are still caught.
                .allowBlockingCallsInside("sun.security.provider.NativePRNG$RandomIO", "implNextBytes")
                // gRPC's call credentials hand their work to the channel's offload executor; when that pool
                // adds a worker, ThreadPoolExecutor takes its mainLock for a few field updates (a CI run of
                // FirestoreReactiveTest caught that park once): bookkeeping, not a wait on I/O or on a peer.
                .allowBlockingCallsInside("io.grpc.internal.ManagedChannelImpl$ExecutorHolder", "execute")
                .blockingMethodCallback(method -> {
                    CAUGHT.add(method + " on thread " + Thread.currentThread().getName() + "\n    at "
                            + Arrays.stream(new Throwable().getStackTrace()).skip(1).limit(25).map(String::valueOf)
                                    .collect(Collectors.joining("\n    at ")));
                    throw new BlockingOperationError(method);
                })
                .install();
        installed = true;
    }

    static synchronized boolean isInstalled() {
        return installed;
    }

    /** Everything caught so far. */
    static List<String> caught() {
        return new ArrayList<>(CAUGHT);
    }

    /** What was caught after {@code before} (a {@link #caught()} snapshot). */
    static List<String> caughtSince(List<String> before) {
        List<String> now = caught();
        return now.subList(Math.min(before.size(), now.size()), now.size());
    }
}
