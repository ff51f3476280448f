package dev.fenceguard.testkit.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A private Redis Cluster of {@code n} masters (no replicas) on free 127.0.0.1 ports: started with
 * {@code redis-server --cluster-enabled yes} and joined with {@code redis-cli --cluster create}.
 * Stop it with {@link #close()} (also done at JVM exit), which deletes the nodes' temporary directories
 * and logs.
 *
 * @since 0.1
 */
public final class RedisCluster implements AutoCloseable {

    private final List<Integer> ports;
    private final List<ManagedProcess> processes;

    private RedisCluster(List<Integer> ports, List<ManagedProcess> processes) {
        this.ports = List.copyOf(ports);
        this.processes = List.copyOf(processes);
    }

    /** Starts {@code masters} nodes and waits until the cluster reports {@code cluster_state:ok}. */
    public static RedisCluster start(int masters) {
        List<Integer> ports = new ArrayList<>();
        List<ManagedProcess> processes = new ArrayList<>();
        try {
            for (int i = 0; i < masters; i++) {
                int port = Ports.freeWithCompanion(10_000);
                Path dir = Files.createTempDirectory("fence-guard-cluster-" + port + "-");
                ManagedProcess p = ManagedProcess.start("redis-cluster-" + port, List.of("redis-server", "--port", Integer.toString(port),
                        "--bind", "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file", dir.resolve("nodes.conf").toString(),
                        "--cluster-node-timeout", "5000", "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                        "--protected-mode", "no"), dir);
                processes.add(p);
                ManagedProcess.awaitOrFail(p, port, Duration.ofSeconds(20), "redis-server (cluster node)");
                ports.add(port);
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            ports.forEach(p -> create.add("127.0.0.1:" + p));
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            Process p = new ProcessBuilder(create).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed:\n" + out);
            }
            RedisCluster cluster = new RedisCluster(ports, processes);
            cluster.awaitOk(Duration.ofSeconds(30));
            return cluster;
        } catch (IOException | InterruptedException | RuntimeException e) {
            processes.forEach(ManagedProcess::close);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("could not start a Redis Cluster (redis-server and redis-cli on the PATH?): " + e.getMessage(), e);
        }
    }

    /** The nodes' ports. */
    public List<Integer> ports() {
        return ports;
    }

    /** {@code redis://127.0.0.1:<port>} of every node (seeds for a cluster client). */
    public List<String> uris() {
        return ports.stream().map(p -> "redis://127.0.0.1:" + p).toList();
    }

    private void awaitOk(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int port : ports) {
            while (true) {
                Process p = new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "cluster", "info").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes());
                p.waitFor();
                if (out.contains("cluster_state:ok")) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("cluster not ok on port " + port + ":\n" + out);
                }
                Thread.sleep(100);
            }
        }
    }

    /** Stops every node and deletes their directories and logs. */
    @Override
    public void close() {
        processes.forEach(ManagedProcess::close);
    }
}
