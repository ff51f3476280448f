package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.testkit.servers.RedisServers;
import dev.fenceguard.testkit.servers.TestPostgres;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The cost of the first call in a fresh JVM (issue #20 item 5): each scenario runs in {@code runs}
 * new JVMs, started with {@link ProcessBuilder} on this JVM's class path. A child sets up what a
 * service has before its first request (a pool with one open connection, or one Redis connection; the
 * lock client or fenced table built), optionally runs the warm-up, then times its first call and the
 * median of the {@value #WARM_CALLS} calls after it ("warm"). The parent reports, per scenario, the
 * median first call with its spread (min .. max) and the median warm call, across JVMs.
 *
 * <p>Baselines in the same run: the driver's own first plain statement (a prepared {@code UPDATE} on a
 * pooled pgjdbc connection; a Lettuce {@code SET}), and for the warmed scenarios pgjdbc's {@code UPDATE} after
 * one run of it with a NULL id ({@code pg-plain-update-warmed}, the driver's side of
 * {@code FencedWriter.warmUp}). Redis runs on a private server
 * ({@link RedisServers#start}) whose script cache is flushed before every child, so that every child is
 * a first start against a server that has never seen the scripts; PostgreSQL on
 * {@link TestPostgres#server()}, in a schema of its own that is dropped at the end.
 *
 * <p>The {@code -orthrow} and {@code -switch} write scenarios handle each outcome as a user's code would:
 * {@code orThrow()}, or a pattern {@code switch} over the outcome in this class, a call site the library
 * never ran (the plain write scenarios call {@code isApplied()}).
 *
 * <p>After the warm calls a child pauses as long again and times one more call: a warm process's call
 * after the same idle time, the share of the first call that is idleness (parked threads, cold caches,
 * on both sides of the socket) and not a first time.
 *
 * <p>System properties of the children: {@code firstcall.pause.ms} (default 500), the pause between setup
 * (and warm-up) and the first call; {@code firstcall.pool} (default 2), the size of the PostgreSQL pool;
 * {@code firstcall.warmup.rounds} (default 1), how many times the warm-up runs. Set on the parent, they
 * pass to every child, as do the JVM options in {@code firstcall.jvm.args} (say {@code -Xint});
 * {@code firstcall.echo=true} prints the children's output.
 * Of the parent: {@code firstcall.scenarios}, a comma-separated subset of the scenarios to run;
 * {@code firstcall.compare}, the class path of another build (say, the last release's jars), whose
 * children run alternately with this build's, so that both meet the same machine load.
 *
 * <p>Arguments: {@code [runs=10]}, or {@code classpath} to print the class path children run on.
 * Children take {@code child <scenario> <settings...>}.
 */
public final class FirstCallBenchmark {

    static final int WARM_CALLS = 30;
    private static final Duration TTL = Duration.ofSeconds(30);

    private FirstCallBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            child(args[1], Arrays.copyOfRange(args, 2, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("classpath")) { // for running a child by hand, e.g. with -verbose:class
            System.out.println(classPath());
            return;
        }
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        System.out.printf("First calls in fresh JVMs: %d runs per scenario, %s %s%n%n", runs, System.getProperty("java.vm.name"),
                Runtime.version());
        TestPostgres pg = TestPostgres.server();
        try (TestPostgres.Schema schema = pg.newSchema("firstcall"); RedisServers.Server redis = RedisServers.start()) {
            PGSimpleDataSource ds = (PGSimpleDataSource) schema.dataSource();
            FenceGuardMigrations.builder(ds).withSchema(schema.name()).migrate();
            schema.execute("CREATE TABLE " + schema.name() + ".orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, "
                    + "fence_token BIGINT NOT NULL DEFAULT 0)");
            schema.execute("INSERT INTO " + schema.name() + ".orders (id, status) SELECT g, 'new' FROM generate_series(1, 1000) g");
            String[] pgArgs = {ds.getURL(), schema.name()};
            String[] redisArgs = {redis.uri().toString()};
            Runnable flushScripts = () -> {
                RedisClient admin = RedisClient.create(RedisURI.create(redis.uri()));
                try (StatefulRedisConnection<String, String> c = admin.connect()) {
                    c.sync().scriptFlush(); // a private server: every child starts against a server without our scripts
                } finally {
                    admin.shutdown();
                }
            };
            Map<String, String[]> scenarios = new LinkedHashMap<>();
            for (String s : List.of("pg-plain-update", "pg-plain-update-warmed", "pg-acquire", "pg-acquire-warmed", "pg-write", "pg-write-warmed",
                    "pg-write-orthrow-warmed", "pg-write-switch-warmed")) {
                scenarios.put(s, pgArgs);
            }
            for (String s : List.of("redis-plain-set", "redis-acquire", "redis-acquire-warmed", "redis-write", "redis-write-warmed",
                    "redis-write-orthrow-warmed", "redis-write-switch-warmed")) {
                scenarios.put(s, redisArgs);
            }
            System.out.println("| scenario | first call, median (min .. max) | warm call, median | first / warm "
                    + "| warm call after the same pause, median (/ warm) | warm-up, median |");
            System.out.println("|---|---|---|---|---|---|");
            String only = System.getProperty("firstcall.scenarios"); // a comma-separated subset, for quick runs
            if (only != null) {
                scenarios.keySet().retainAll(List.of(only.split(",")));
            }
            // Another build's class path, run alternately with this one, so both meet the same machine load.
            String compared = System.getProperty("firstcall.compare");
            List<String> builds = compared == null ? List.of(classPath()) : List.of(compared, classPath());
            for (Map.Entry<String, String[]> s : scenarios.entrySet()) {
                List<List<double[]>> results = new ArrayList<>();
                builds.forEach(b -> results.add(new ArrayList<>()));
                for (int run = 0; run < runs; run++) {
                    for (int b = 0; b < builds.size(); b++) {
                        if (s.getKey().startsWith("redis")) {
                            flushScripts.run();
                        }
                        results.get(b).add(runChild(s.getKey(), s.getValue(), builds.get(b)));
                    }
                }
                for (int b = 0; b < builds.size(); b++) {
                    report(s.getKey() + (builds.size() == 1 ? "" : b == 0 ? " (compared build)" : " (this build)"), results.get(b));
                }
            }
        }
    }

    private static void report(String scenario, List<double[]> results) {
        double[] first = results.stream().mapToDouble(r -> r[0]).sorted().toArray();
        double[] warm = results.stream().mapToDouble(r -> r[1]).sorted().toArray();
        double[] warmUp = results.stream().mapToDouble(r -> r[2]).sorted().toArray();
        double[] afterPause = results.stream().mapToDouble(r -> r[3]).sorted().toArray();
        double m = median(first);
        double w = median(warm);
        double p = median(afterPause);
        System.out.printf("| %s | %.2f ms (%.2f .. %.2f) | %.2f ms | %.1fx | %.2f ms (%.1fx) | %s |%n", scenario, m, first[0],
                first[first.length - 1], w, m / w, p, p / w,
                warmUp[warmUp.length - 1] > 0 ? String.format("%.1f ms", median(warmUp)) : "-");
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** Runs one child JVM; its last line is {@code RESULT first-ms warm-ms warm-up-ms second-ms after-pause-ms}. */
    private static double[] runChild(String scenario, String[] settings, String classPath) throws Exception {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
        String jvmArgs = System.getProperty("firstcall.jvm.args", "").strip(); // say -Xint, for experiments
        if (!jvmArgs.isEmpty()) {
            command.addAll(List.of(jvmArgs.split("\\s+")));
        }
        // The children's own settings (firstcall.pause.ms, firstcall.pool, firstcall.warmup.rounds) pass through.
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("firstcall.")).sorted()
                .forEach(k -> command.add("-D" + k + "=" + System.getProperty(k)));
        command.addAll(List.of("-cp", classPath, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                FirstCallBenchmark.class.getName(), "child", scenario));
        command.addAll(List.of(settings));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String result = null;
        StringBuilder output = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                output.append(line).append('\n');
                if (Boolean.getBoolean("firstcall.echo")) { // the children's output, say with -Xlog:class+load
                    System.out.println("  [" + scenario + "] " + line);
                }
                if (line.startsWith("RESULT ")) {
                    result = line;
                }
            }
        }
        if (p.waitFor() != 0 || result == null) {
            throw new IllegalStateException("child " + scenario + " failed:\n" + output);
        }
        String[] f = result.split(" ");
        return new double[] {Double.parseDouble(f[1]), Double.parseDouble(f[2]), Double.parseDouble(f[3]), Double.parseDouble(f[5])};
    }

    /** This JVM's class path; under {@code exec:java} the project's classes are in a class loader, not on it. */
    private static String classPath() {
        if (FirstCallBenchmark.class.getClassLoader() instanceof URLClassLoader loader) {
            List<String> entries = new ArrayList<>();
            for (URL url : loader.getURLs()) {
                try {
                    entries.add(Path.of(url.toURI()).toString());
                } catch (Exception e) {
                    throw new IllegalStateException("class path entry " + url, e);
                }
            }
            return String.join(File.pathSeparator, entries);
        }
        return System.getProperty("java.class.path");
    }

    // --- the child side: one scenario, one first call ---

    /** A timed call: {@code i} is 0 for the first call, then 1 .. WARM_CALLS. */
    private interface Call {
        void run(int i) throws Exception;
    }

    private static void child(String scenario, String[] settings) throws Exception {
        boolean warmed = scenario.endsWith("-warmed");
        String kind = scenario.replace("-warmed", "");
        // How the write's outcome is handled, as a user's code would: isApplied() (the plain -write rows),
        // orThrow(), or a pattern switch over the outcome in this class (a call site the library never ran).
        String handling = kind.endsWith("-orthrow") ? "orthrow" : kind.endsWith("-switch") ? "switch" : "isapplied";
        kind = kind.replace("-orthrow", "").replace("-switch", "");
        if (kind.startsWith("pg")) {
            HikariConfig config = new HikariConfig();
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(settings[0]);
            ds.setCurrentSchema(settings[1]);
            config.setDataSource(ds);
            config.setMaximumPoolSize(Integer.getInteger("firstcall.pool", 2));
            config.setMinimumIdle(1);
            try (HikariDataSource pool = new HikariDataSource(config)) { // opens its first connection here
                String run = Long.toString(ProcessHandle.current().pid());
                switch (kind) {
                    case "pg-plain-update" -> {
                        String[] statuses = texts("plain ");
                        // Warmed, the driver's baseline for fence-guard's warm-up: the same statement, run once
                        // with a NULL id (no row matches), as FencedWriter.warmUp runs its UPDATE.
                        time(warmed ? () -> {
                            try (Connection c = pool.getConnection();
                                    PreparedStatement ps = c.prepareStatement("UPDATE orders SET status = ? WHERE id = ?")) {
                                ps.setString(1, "");
                                ps.setNull(2, Types.BIGINT);
                                ps.executeUpdate();
                            }
                        } : null, i -> {
                            try (Connection c = pool.getConnection();
                                    PreparedStatement ps = c.prepareStatement("UPDATE orders SET status = ? WHERE id = ?")) {
                                ps.setString(1, statuses[i]);
                                ps.setLong(2, 1 + i);
                                ps.executeUpdate();
                            }
                        });
                    }
                    case "pg-acquire" -> {
                        LockClient locks = LockClient.builder(FenceGuardJdbc.builder(pool).withSchema(settings[1]).build().lockBackend())
                                .withMetrics(LockMetrics.none()).build();
                        List<Lease> leases = new ArrayList<>();
                        String[] keys = texts("first-call:" + run + ":");
                        time(warmed ? locks::warmUp : null, i -> leases.add(acquired(locks, keys[i])));
                        leases.forEach(Lease::close);
                    }
                    case "pg-write" -> {
                        FencedWriter orders = FencedTable.builder(settings[1], "orders", "id", "fence_token").withKeyType(Long.class)
                                .withMetrics(LockMetrics.none()).build().on(pool);
                        FenceToken fence = FenceToken.of(System.currentTimeMillis());
                        String[] statuses = texts("fenced ");
                        time(warmed ? () -> orders.warmUp(Assignments.of("status", "")) : null, i -> {
                            if (!handled(orders.update(101L + i, fence, Assignments.of("status", statuses[i])), handling)) {
                                throw new IllegalStateException("fenced update not applied");
                            }
                        });
                    }
                    default -> throw new IllegalArgumentException("unknown scenario " + scenario);
                }
            }
            return;
        }
        RedisClient client = RedisClient.create(RedisURI.create(settings[0]));
        try {
            String run = "fc" + ProcessHandle.current().pid() + ":";
            switch (kind) {
                case "redis-plain-set" -> {
                    try (StatefulRedisConnection<String, String> c = client.connect()) {
                        RedisCommands<String, String> redis = c.sync();
                        String[] keys = texts(run + "plain:");
                        time(null, i -> redis.set(keys[i], "value"));
                    }
                }
                case "redis-acquire", "redis-write" -> {
                    try (FenceGuardRedis redis = FenceGuardRedis.builder(client).withKeyPrefix(run).withFenceKeyPrefix(run + "fence:")
                            .withMetrics(LockMetrics.none()).build()) {
                        if (kind.equals("redis-acquire")) {
                            LockClient locks = LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none()).build();
                            List<Lease> leases = new ArrayList<>();
                            String[] keys = texts("first-call:");
                            time(warmed ? locks::warmUp : null, i -> leases.add(acquired(locks, keys[i])));
                            leases.forEach(Lease::close);
                        } else {
                            FencedRedis writes = redis.fencedWrites();
                            FenceToken fence = FenceToken.of(7);
                            String[] keys = texts(run + "data:");
                            time(warmed ? writes::warmUp : null, i -> {
                                if (!handled(writes.set(keys[i], fence, "value"), handling)) {
                                    throw new IllegalStateException("fenced set not applied");
                                }
                            });
                        }
                    }
                }
                default -> throw new IllegalArgumentException("unknown scenario " + scenario);
            }
        } finally {
            client.shutdown();
        }
    }

    /**
     * {@code prefix + i} for every call {@code i}, made before any call is timed: a string concatenation
     * is linked on its first run, and the benchmark's own should not be counted in the first call.
     */
    private static String[] texts(String prefix) {
        String[] texts = new String[WARM_CALLS + 2];
        for (int i = 0; i < texts.length; i++) {
            texts[i] = prefix + i;
        }
        return texts;
    }

    /** The outcome handled as {@code handling} says; true if it was applied. */
    private static boolean handled(WriteOutcome outcome, String handling) {
        return switch (handling) { // a string switch: hashCode and equals, no bootstrap
            case "orthrow" -> outcome.orThrow() == outcome;
            case "switch" -> applied(outcome);
            default -> outcome.isApplied();
        };
    }

    /** A user's own pattern switch over the outcome: its first run bootstraps this call site. */
    private static boolean applied(WriteOutcome outcome) {
        return switch (outcome) {
            case WriteOutcome.Applied a -> true;
            case WriteOutcome.Stale s -> false;
            case WriteOutcome.NotFound n -> false;
        };
    }

    private static Lease acquired(LockClient locks, String key) {
        Optional<Lease> lease = locks.tryAcquire(key, TTL);
        if (lease.isEmpty()) { // not orElseThrow(() -> ..): that lambda would be linked inside the first call
            throw new IllegalStateException("lock " + key + " was held");
        }
        return lease.get();
    }

    /** Runs {@code warmUp} (if any), then the first call and {@link #WARM_CALLS} more; prints the RESULT line. */
    private static void time(ThrowingRunnable warmUp, Call call) throws Exception {
        double warmUpMs = 0;
        if (warmUp != null) {
            long t0 = System.nanoTime();
            for (int r = Integer.getInteger("firstcall.warmup.rounds", 1); r > 0; r--) {
                warmUp.run();
            }
            warmUpMs = (System.nanoTime() - t0) / 1e6;
        }
        // A service's first request comes some time after startup; the pause lets the JIT compiler threads
        // finish what setup (and the warm-up) queued, for every scenario alike, so they do not compete
        // with the first call for this machine's two cores.
        Thread.sleep(Long.getLong("firstcall.pause.ms", 500));
        System.out.println("FIRST CALL"); // a marker for -verbose:class: what loads after it, the first call loaded
        long t0 = System.nanoTime();
        call.run(0);
        double firstMs = (System.nanoTime() - t0) / 1e6;
        System.out.println("FIRST CALL DONE");
        double[] warm = new double[WARM_CALLS];
        for (int i = 0; i < WARM_CALLS; i++) {
            long t = System.nanoTime();
            call.run(i + 1);
            warm[i] = (System.nanoTime() - t) / 1e6;
        }
        double secondMs = warm[0];
        // The same pause again, then one more call: what a warm process pays after being idle as long as
        // the first call was (threads parked, caches cold), which no warm-up can take away.
        Thread.sleep(Long.getLong("firstcall.pause.ms", 500));
        long tp = System.nanoTime();
        call.run(WARM_CALLS + 1);
        double afterPauseMs = (System.nanoTime() - tp) / 1e6;
        Arrays.sort(warm);
        // Formatted first, then written as one line: printf writes its pieces one by one, and the first printf of
        // the process loads the classes that format its first number between them (jdk.internal.math.FormattedFPDecimal
        // was seen), whose -Xlog:class+load lines (written to the same stdout by the JVM) then split this line and the
        // parent could not parse it.
        String result = String.format(Locale.ROOT, "RESULT %.4f %.4f %.4f %.4f %.4f", firstMs, median(warm), warmUpMs,
                secondMs, afterPauseMs);
        System.out.println(result);
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
