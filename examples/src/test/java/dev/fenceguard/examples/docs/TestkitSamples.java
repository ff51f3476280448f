package dev.fenceguard.examples.docs;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.ManualTimeSource;
import dev.fenceguard.testkit.PausableBackend;
import dev.fenceguard.testkit.TestLocks;
import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.RedisServers;
import dev.fenceguard.testkit.servers.TcpProxy;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * The samples of docs/testing.md and of the testkit's Javadoc that are code in a test (the contract
 * samples are test classes of their own: {@code PostgresBackendContractTest} and its siblings). The
 * guarded counters are rows of a table in the embedded PostgreSQL; the storms' locks are on PostgreSQL
 * or on a private {@code redis-server}.
 */
final class TestkitSamples {

    private TestkitSamples() {}

    /** The storms' counters: a row each in {@code public.counters}, {@code n} guarded by {@code fence_token}. */
    static final class Counters {
        final DataSource dataSource;
        final FencedWriter writer;

        Counters(DataSource dataSource) {
            this.dataSource = dataSource;
            DSL.using(dataSource, SQLDialect.POSTGRES).execute("CREATE TABLE IF NOT EXISTS public.counters (id TEXT PRIMARY KEY, "
                    + "n BIGINT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0)");
            this.writer = FencedTable.builder("public", "counters", "id", "fence_token").build().on(dataSource);
        }

        /** Creates counter {@code id} at 0, with no fence (a storm needs its counter made before it). */
        void create(String id) {
            DSL.using(dataSource, SQLDialect.POSTGRES).execute("DELETE FROM public.counters WHERE id = ?", id);
            DSL.using(dataSource, SQLDialect.POSTGRES).execute("INSERT INTO public.counters (id) VALUES (?)", id);
        }

        long count(String id) {
            return DSL.using(dataSource, SQLDialect.POSTGRES).fetchSingle("SELECT n FROM public.counters WHERE id = ?", id)
                    .get(0, Long.class);
        }

        /** Counter {@code id} as a storm's fenced counter: claim, read, fenced update. */
        ZombieStorm.FencedCounter counter(String id) {
            return new ZombieStorm.FencedCounter() {
                @Override
                public WriteOutcome claim(FenceToken f) {
                    return writer.claim(id, f);
                }

                @Override
                public long read() {
                    return count(id);
                }

                @Override
                public WriteOutcome write(long v, FenceToken f) {
                    return writer.update(id, f, Assignments.of("n", v));
                }
            };
        }
    }

    static ZombieStorm.Result docStorm(LockClient locks, FencedWriter counters, Counters repository) throws Exception {
        // docs/testing.md: zombie storm (begin)
        ZombieStorm.Result r = ZombieStorm.builder(locks, "counter:1", new ZombieStorm.FencedCounter() {
            public WriteOutcome claim(FenceToken f) { return counters.claim("c", f); }
            public long read() { return repository.count("c"); }
            public WriteOutcome write(long v, FenceToken f) { return counters.update("c", f, Assignments.of("n", v)); }
        }).withAttempts(ZombieStorm.attemptsProperty(300)).build().run();   // -Dfenceguard.storm.attempts=10000 for a soak
        System.out.println(r.summary());
        r.requireSafe();   // an AssertionError with the summary, and the first unmapped error as its cause
        // docs/testing.md: zombie storm (end)
        return r;
    }

    static void docFaultStorm(ZombieStorm.FencedCounter counter) throws Exception {
        // docs/testing.md: faults (begin)
        try (RedisServers.Server redisServer = RedisServers.start();                  // a private redis-server
                TcpProxy proxy = TcpProxy.start("127.0.0.1", redisServer.port())) {
            RedisClient client = RedisClient.create("redis://127.0.0.1:" + proxy.port());   // the lock's client, through the proxy
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
                LockClient locks = LockClient.of(redis.lockBackend());
                ZombieStorm.builder(locks, "counter:1", counter).withAttempts(200)
                        .withFault(50, proxy::cutConnections)                    // drop every open connection, both sides
                        .withFault(100, () -> proxy.delay(Duration.ofMillis(60))) // 60 ms each way from now on
                        .withFault(120, () -> proxy.delay(Duration.ZERO))
                        .withFault(150, redisServer::restart)                    // the lock's data is lost
                        .build().run().requireSafe();
            }
            client.shutdown();
        }
        // docs/testing.md: faults (end)
    }

    static ZombieStorm.Result javadocStorm(LockClient locks, ZombieStorm.FencedCounter myFencedCounter, RedisServers.Server server)
            throws Exception {
        // dev/fenceguard/testkit/ZombieStorm.java: storm (begin)
        ZombieStorm.Result r = ZombieStorm.builder(locks, "counter:1", myFencedCounter)
                .withAttempts(ZombieStorm.attemptsProperty(300))      // -Dfenceguard.storm.attempts=10000 for a soak
                .withFault(150, server::restart)
                .build().run();
        System.out.println(r.summary());   // zombie storm: attempts=300 acquired=300 [BLOCKING=150 ASYNC=150] applied=231 rejected-stale=62 stale-applied=0 lost-updates=0 errors=7 [UNAVAILABLE=7] unmapped-errors=0 ...
        r.requireSafe();
        // dev/fenceguard/testkit/ZombieStorm.java: storm (end)
        return r;
    }

    static void tcpProxy(RedisServers.Server redisServer) {
        // dev/fenceguard/testkit/servers/TcpProxy.java: proxy (begin)
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", redisServer.port())) {
            RedisClient client = RedisClient.create("redis://127.0.0.1:" + proxy.port());
            client.connect().sync().set("k", "v");
            proxy.cutConnections();            // every open connection drops: commands in flight, or sent before the client notices, fail
            proxy.delay(Duration.ofMillis(200)); // every chunk now arrives 200 ms late, in both directions
            String v = client.connect().sync().get("k");   // a new connection through the proxy: 400 ms or more per round trip
            proxy.delay(Duration.ZERO);
            client.shutdown();
        }
        // dev/fenceguard/testkit/servers/TcpProxy.java: proxy (end)
    }

    /** What the ManualTimeSource sample leaves: the clock, the client and its lease. */
    record Manual(ManualTimeSource time, LockClient client, Lease lease) {}

    static Manual manualTimeSource() {
        // dev/fenceguard/testkit/ManualTimeSource.java: clock (begin)
        ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
        InMemoryLockBackend backend = new InMemoryLockBackend(time);
        LockClient client = LockClient.builder(backend).withTimeSource(time).build();
        Lease lease = client.tryAcquire("orders:42", Duration.ofSeconds(30)).orElseThrow();
        time.advance(Duration.ofSeconds(31));   // every 30 s lease is now expired: lease.isValid() is false
        // dev/fenceguard/testkit/ManualTimeSource.java: clock (end)
        return new Manual(time, client, lease);
    }

    /** What the PausableBackend sample leaves: the link, the zombie's lease and the one taken after it. */
    record Paused(PausableBackend link, LockClient zombie, Lease stale, Lease fresh) {}

    static Paused pausableBackend(LockBackend backend) throws Exception {
        // dev/fenceguard/testkit/PausableBackend.java: pause (begin)
        PausableBackend link = new PausableBackend(backend);
        LockClient zombie = LockClient.of(link);
        Lease stale = zombie.tryAcquire("orders:42", Duration.ofSeconds(1)).orElseThrow();
        link.pause();           // its calls now go unanswered: it loses the lease at its local deadline
        Lease fresh = LockClient.of(backend).acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(30))
                .orElseThrow(); // another process takes the lock once the lease expired, with a greater fence
        link.resume();          // the zombie's late calls reach the server
        // dev/fenceguard/testkit/PausableBackend.java: pause (end)
        return new Paused(link, zombie, stale, fresh);
    }

    /** The code under test of the TestLocks sample: ships an order under its shipping lock, keeping the fence. */
    static final class OrderService {
        static final Map<Long, FenceToken> SHIPPED = new ConcurrentHashMap<>();
        private final LockClient locks;

        OrderService(LockClient locks) {
            this.locks = locks;
        }

        void ship(long id) throws InterruptedException {
            locks.withLock("shipping:" + id, Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
                SHIPPED.put(id, lease.fence());
                return id;
            });
        }
    }

    /** What the TestLocks sample leaves: the locks and the lease it expired. */
    record Tested(TestLocks locks, Lease lease) {}

    static Tested testLocks(LockListener myListener) throws Exception {
        // dev/fenceguard/testkit/TestLocks.java: test locks (begin)
        TestLocks locks = TestLocks.create(b -> b.onEvents(myListener));
        Lease lease = locks.lease("orders:42", 7);            // fence 7, no backend to start
        new OrderService(locks.client()).ship(42);            // your code, with a real LockClient
        locks.expire(lease);                                  // lost now: isValid() false, listener told
        locks.time().advance(Duration.ofSeconds(31));         // or let time pass
        // dev/fenceguard/testkit/TestLocks.java: test locks (end)
        return new Tested(locks, lease);
    }
}
