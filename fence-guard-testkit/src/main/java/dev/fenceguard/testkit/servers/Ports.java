package dev.fenceguard.testkit.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

/**
 * Loopback port helpers for servers the harness starts itself.
 *
 * @since 0.1
 */
public final class Ports {

    private Ports() {}

    /** A port on 127.0.0.1 that was free a moment ago. */
    public static int free() {
        try (ServerSocket socket = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }

    /**
     * A loopback port that nothing listened on a moment ago, for tests that need a connection refused
     * ("the server is down"). It lies below the machine's ephemeral port range, unlike {@link #free()}'s:
     * in that range any process's next {@code connect} or {@code bind(0)} may take the port, and a
     * loopback connect can even pick the very port it dials as its own source and connect to itself
     * (TCP simultaneous open), so "refused" would not be certain.
     *
     * @since 0.1
     */
    public static int refused() {
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        int below = Math.max(ephemeralLow(), 11_024);
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = random.nextInt(10_000, below);
            if (isFree(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port below " + below + " after 200 tries");
    }

    /** The lowest ephemeral port (Linux: ip_local_port_range); 32768, the common default, where unknown. */
    static int ephemeralLow() {
        try {
            // Read as a stream: Files.readString trusts the size the file system reports, and on some kernels
            // (seen here) a /proc file reports a size that cuts "32768\t60999" to "3".
            String range;
            try (java.io.InputStream in = java.nio.file.Files.newInputStream(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
                range = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            }
            return Integer.parseInt(range.strip().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }

    /**
     * A port that is free together with {@code port + offset} (Redis Cluster's bus port is the data
     * port + 10000, so the data port must stay below 55536).
     */
    public static int freeWithCompanion(int offset) {
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = random.nextInt(20_000, 65_535 - offset);
            if (isFree(port) && isFree(port + offset)) {
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port pair with offset " + offset + " after 200 tries");
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 0, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Waits until something accepts TCP connections on 127.0.0.1:{@code port}. */
    public static boolean awaitListening(int port, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            try (Socket ignored = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return true;
            } catch (IOException e) {
                sleep(Duration.ofMillis(20));
            }
        }
        return false;
    }

    static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
