package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A Redis server that stops answering (paused by SIGSTOP: the socket stays open, nothing comes back)
 * or dies (SIGKILL) cannot hold fence-guard past its bounds: each lock client call ends with TIMEOUT at
 * its timeout (the backend itself starts no timer: see {@code LockBackend}) and each fenced write at the
 * write timeout, a grant that answers after its call timed out is released by the client, a lease is declared lost at its local deadline,
 * {@code withLock} returns within the release timeout, and no thread is left waiting in the driver. Lettuce keeps its default 60 s command timeout
 * here, so every bound seen is fence-guard's own. Each test runs a private redis-server.
 */
class RedisHungServerTest {

    /** What the timer's latency may add to a deadline (docs/async-and-bounds.md). */
    private static final long SLACK_NANOS = Duration.ofMillis(250).toNanos();
    private static final Duration LEASE_TTL = Duration.ofMillis(1500);
    private static final Duration RELEASE_TIMEOUT = Duration.ofMillis(500);

    @Test
    void everyCallToAPausedServerEndsWithTimeoutAtItsTimeout() throws Exception {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
                RedisLockBackend backend = redis.lockBackend();
                Duration timeout = Duration.ofMillis(300);
                LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none()).withCallTimeout(timeout)
                        .withReleaseTimeout(timeout).build();
                Lease held = locks.tryAcquire("orders:paused", Duration.ofSeconds(30)).orElseThrow(); // scripts cached too
                long pid = pidOf(server);
                signal(pid, "STOP");
                try {
                    long sent = System.nanoTime();
                    CompletableFuture<?> direct = backend.lookup(LockKey.of("orders:paused"), timeout).toCompletableFuture();
                    List<CompletableFuture<?>> calls = List.of(
                            locks.async().tryAcquire("orders:other", Duration.ofSeconds(30)).toCompletableFuture(),
                            locks.async().release(held).toCompletableFuture(),
                            locks.async().lookup("orders:paused").toCompletableFuture());
                    assertEachEndsWithTimeoutAt(calls, sent, timeout);
                    assertThat(direct).as("the backend's own stage: no timer of its own ends it").isNotDone();
                } finally {
                    signal(pid, "CONT");
                }
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    @Test
    void everyFencedWriteToAPausedServerEndsWithTimeoutAtItsWriteTimeout() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).withCallTimeout(timeout).withMetrics(LockMetrics.none())
                    .build()) {
                FencedRedis writes = redis.fencedWrites();
                FenceToken fence = FenceToken.of(5);
                writes.set("stock:sku-1", fence, "41").orThrow(); // connected, scripts cached
                long pid = pidOf(server);
                signal(pid, "STOP");
                try {
                    long sent = System.nanoTime();
                    AsyncFencedRedis async = writes.async();
                    List<CompletableFuture<?>> calls = List.of(
                            async.set("stock:sku-1", fence, "40").toCompletableFuture(),
                            async.hset("order:1", fence, Map.of("status", "paid")).toCompletableFuture(),
                            async.delete("order:2", fence).toCompletableFuture(),
                            async.claim("stock:sku-1", fence).toCompletableFuture(),
                            async.eval("return 1", List.of("stock:sku-1"), fence, List.of()).toCompletableFuture());
                    assertEachEndsWithTimeoutAt(calls, sent, timeout);

                    long waited = System.nanoTime();
                    assertThatThrownBy(() -> writes.set("stock:sku-1", fence, "39")).as("the blocking face waits on the same bound")
                            .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
                    assertThat(Duration.ofNanos(System.nanoTime() - waited)).isLessThan(timeout.plusNanos(SLACK_NANOS));
                } finally {
                    signal(pid, "CONT");
                }
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    @Test
    void aGrantThatAnswersAfterTheClientGaveUpIsReleasedByTheClient() throws Exception {
        // Keyspace events tell the test when the server deleted a lock key: no polling, no sleeps.
        try (RedisServers.Server server = RedisServers.start("--notify-keyspace-events", "Kg")) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build();
                    StatefulRedisConnection<String, String> admin = client.connect();
                    StatefulRedisPubSubConnection<String, String> events = client.connectPubSub()) {
                RedisLockBackend backend = redis.lockBackend();
                LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none()).withCallTimeout(Duration.ofMillis(200))
                        .build();
                LockKey granted = LockKey.of("orders:late-grant");
                assertThat(locks.lookup(granted.value())).as("connected, scripts cached").isEmpty();
                CountDownLatch deleted = new CountDownLatch(1);
                String lockKey = backend.lockKeyOf(granted.value());
                events.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String channel, String message) {
                        if ("del".equals(message) && channel.substring(channel.indexOf(':') + 1).equals(lockKey)) {
                            deleted.countDown();
                        }
                    }
                });
                events.sync().subscribe("__keyspace@0__:" + lockKey);

                long pid = pidOf(server);
                signal(pid, "STOP");
                try {
                    CompletableFuture<?> acquire = locks.async().tryAcquire(granted.value(), Duration.ofSeconds(30)).toCompletableFuture();
                    assertThat(failureOf(acquire)).isInstanceOfSatisfying(FenceGuardException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
                } finally {
                    signal(pid, "CONT"); // the queued command now runs: it succeeds, too late for its caller
                }
                assertThat(deleted.await(10, TimeUnit.SECONDS)).as("the late grant released after its answer").isTrue();
                assertThat(admin.sync().exists(backend.fenceKeyOf(granted.value()))).as("the late acquisition did run").isOne();
                assertThat(BlockingBackend.of(backend).lookup(granted)).isEmpty();
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    @Test
    void aLeaseIsLostAtItsDeadlineAndWithLockReturnsInTimeWhenTheServerIsPaused() throws Exception {
        try (RedisServers.Server server = RedisServers.start()) {
            try {
                long pid = pidOf(server);
                holdWhileTheServerHangs(server, s -> signal(pid, "STOP"), true);
            } finally {
                server.process().kill(); // SIGKILL ends a stopped process too
            }
        }
    }

    @Test
    void aLeaseIsLostAtItsDeadlineAndWithLockReturnsInTimeWhenTheServerIsKilled() throws Exception {
        try (RedisServers.Server server = RedisServers.start()) {
            holdWhileTheServerHangs(server, s -> s.process().kill(), false);
        }
    }

    /**
     * withLock with a 1.5 s lease; the work makes the server hang at once (before the first renewal,
     * so no renewal is in flight and the deadline read is the one that counts), then waits for the
     * loss. Checks the loss against the deadline, withLock's return against the release timeout, and
     * the threads afterwards.
     */
    private static void holdWhileTheServerHangs(RedisServers.Server server, Consumer<RedisServers.Server> hang,
            boolean expectTimeout) throws Exception {
        RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
        try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
            RedisLockBackend backend = redis.lockBackend();
            CountDownLatch lost = new CountDownLatch(1);
            AtomicReference<Long> lostAt = new AtomicReference<>();
            AtomicReference<Throwable> lostCause = new AtomicReference<>();
            AtomicReference<Boolean> isLostWhenTold = new AtomicReference<>();
            LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none()).withReleaseTimeout(RELEASE_TIMEOUT)
                    .onEvents(new LockListener() {
                        @Override
                        public void onLeaseLost(Lease lease, Throwable cause) {
                            lostAt.set(System.nanoTime());
                            lostCause.set(cause);
                            isLostWhenTold.set(lease.isLost() && !lease.isValid());
                            lost.countDown();
                        }
                    }).build();
            long[] deadline = new long[1];
            long[] workEnded = new long[1];
            Optional<String> result = locks.withLock("orders:hung", LEASE_TTL, Duration.ZERO, lease -> {
                hang.accept(server);
                deadline[0] = System.nanoTime() + lease.remaining().toNanos();
                assertThat(lost.await(10, TimeUnit.SECONDS)).as("lease lost").isTrue();
                assertThat(lease.isLost()).isTrue();
                assertThat(lease.isValid()).isFalse();
                workEnded[0] = System.nanoTime();
                return "done";
            });
            long returned = System.nanoTime();
            System.out.printf("hung redis: loss reported %d ms after the local deadline; withLock's release took %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(lostAt.get() - deadline[0]), TimeUnit.NANOSECONDS.toMillis(returned - workEnded[0]));
            assertThat(result).contains("done");
            assertThat(isLostWhenTold.get()).as("isLost() and !isValid() when the listener is told").isTrue();
            assertThat(Duration.ofNanos(lostAt.get() - deadline[0])).as("loss reported after the local deadline by")
                    .isLessThanOrEqualTo(Duration.ofNanos(SLACK_NANOS));
            assertThat(Duration.ofNanos(returned - workEnded[0])).as("withLock's final release")
                    .isLessThanOrEqualTo(RELEASE_TIMEOUT.plusNanos(SLACK_NANOS));
            assertThat(lostCause.get()).isInstanceOf(FenceGuardException.class);
            if (expectTimeout) {
                assertThat(((FenceGuardException) lostCause.get()).code()).isEqualTo(ErrorCode.TIMEOUT);
            }
            assertNoThreadWaitsInTheDriverOrFenceGuard();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /**
     * Each call, sent at {@code sent} to a paused server, returned at once and ends with TIMEOUT at its
     * timeout; afterwards no thread waits for them.
     */
    private static void assertEachEndsWithTimeoutAt(List<CompletableFuture<?>> calls, long sent, Duration timeout)
            throws InterruptedException {
        assertThat(calls).as("each call returned at once, before any answer").noneMatch(CompletableFuture::isDone);
        for (CompletableFuture<?> call : calls) {
            Throwable failure = failureOf(call);
            long elapsed = System.nanoTime() - sent;
            assertThat(failure).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
                assertThat(e.getMessage()).contains("within " + timeout);
            });
            assertThat(Duration.ofNanos(elapsed)).isLessThan(timeout.plusNanos(SLACK_NANOS));
        }
        assertNoThreadWaitsInTheDriverOrFenceGuard();
    }

    /**
     * No thread but the test's own runs fence-guard code or waits in Lettuce's blocking API: a blocking
     * implementation would leave a renewal or a release parked there, on the timer or a pool thread.
     */
    private static void assertNoThreadWaitsInTheDriverOrFenceGuard() {
        List<String> stuck = new ArrayList<>();
        Thread.getAllStackTraces().forEach((thread, frames) -> {
            // A thread running fence-guard code at the moment of the snapshot (a timer completing a stage
            // with TIMEOUT, seen under load) is working, not stuck: only threads parked, waiting or sleeping
            // count. Judged by the top frame: a thread's state and its frames are read at different moments.
            String top = frames.length == 0 ? "" : frames[0].getMethodName();
            if (thread == Thread.currentThread() || !(top.startsWith("park") || top.startsWith("wait") || top.startsWith("sleep"))) {
                return;
            }
            for (StackTraceElement f : frames) {
                String c = f.getClassName();
                if (c.startsWith("dev.fenceguard.") || c.endsWith("FutureSyncInvocationHandler") || c.endsWith("LettuceFutures")
                        || (c.equals("io.lettuce.core.internal.Futures") && f.getMethodName().startsWith("await"))) {
                    stuck.add(thread.getName() + " (" + thread.getState() + ") at " + f);
                    break;
                }
            }
        });
        assertThat(stuck).as("threads in fence-guard or Lettuce's blocking calls").isEmpty();
    }

    private static Throwable failureOf(CompletableFuture<?> call) throws InterruptedException {
        try {
            call.get(10, TimeUnit.SECONDS); // a guard only: the bound under test is far shorter
            return fail("expected the call to fail, it answered " + call.join());
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            return fail("the call was not bounded: no answer within 10 s");
        }
    }

    /** The server's process id, as it tells it ({@code INFO server}); a child of this JVM. */
    private static long pidOf(RedisServers.Server server) {
        long pid;
        RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            pid = Long.parseLong(c.sync().info("server").lines().filter(l -> l.startsWith("process_id:"))
                    .findFirst().orElseThrow().substring("process_id:".length()).strip());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        assertThat(ProcessHandle.current().children().anyMatch(p -> p.pid() == pid)).as("pid %d is our child", pid).isTrue();
        return pid;
    }

    /** Sends SIGSTOP or SIGCONT. */
    private static void signal(long pid, String signal) {
        try {
            int exit = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start().waitFor();
            assertThat(exit).as("kill -%s %d", signal, pid).isZero();
        } catch (IOException e) {
            throw new IllegalStateException("could not run kill", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
