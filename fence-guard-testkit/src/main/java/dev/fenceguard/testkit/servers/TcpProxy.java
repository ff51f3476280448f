package dev.fenceguard.testkit.servers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A loopback TCP proxy for fault tests: listens on a free 127.0.0.1 port and forwards every
 * connection to a target {@code host:port}. Point a client at {@link #port()} and you can, mid-test,
 * {@link #cutConnections() cut} every open connection (both sides are closed, as a network failure or a
 * restarted load balancer would) or {@link #delay(Duration) delay} every byte.
 *
 * <pre>{@code
 * try (TcpProxy proxy = TcpProxy.start("127.0.0.1", redisServer.port())) {
 *     RedisClient client = RedisClient.create("redis://127.0.0.1:" + proxy.port());
 *     client.connect().sync().set("k", "v");
 *     proxy.cutConnections();            // every open connection drops: commands in flight, or sent before the client notices, fail
 *     proxy.delay(Duration.ofMillis(200)); // every chunk now arrives 200 ms late, in both directions
 *     String v = client.connect().sync().get("k");   // a new connection through the proxy: 400 ms or more per round trip
 *     proxy.delay(Duration.ZERO);
 *     client.shutdown();
 * }
 * }</pre>
 *
 * <p>Delay is latency, not a bandwidth limit: each chunk is forwarded {@code delay} after it was read,
 * in order. New connections are accepted after a cut. Thread-safe; each connection uses four virtual
 * threads.
 *
 * @since 0.1
 */
public final class TcpProxy implements AutoCloseable {

    private static final byte[] END = new byte[0];

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket listener;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile long delayNanos;
    private volatile boolean closed;

    private TcpProxy(String targetHost, int targetPort, ServerSocket listener) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.listener = listener;
    }

    /**
     * Starts a proxy on a free loopback port in front of {@code targetHost:targetPort}. The target is
     * not contacted until a client connects.
     *
     * @throws IllegalArgumentException if the host is blank or the port is not in 1..65535
     * @throws UncheckedIOException if no loopback port can be bound
     */
    public static TcpProxy start(String targetHost, int targetPort) {
        Objects.requireNonNull(targetHost, "targetHost");
        if (targetHost.isBlank()) {
            throw new IllegalArgumentException("target host must not be blank");
        }
        if (targetPort < 1 || targetPort > 65_535) {
            throw new IllegalArgumentException("target port must be in 1..65535, was " + targetPort);
        }
        try {
            ServerSocket listener = new ServerSocket();
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            TcpProxy proxy = new TcpProxy(targetHost, targetPort, listener);
            Thread.ofVirtual().name("tcp-proxy-accept-" + listener.getLocalPort()).start(proxy::acceptLoop);
            return proxy;
        } catch (IOException e) {
            throw new UncheckedIOException("could not open a loopback port for the proxy", e);
        }
    }

    /** The loopback port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** {@code 127.0.0.1:<port>}. */
    public String hostPort() {
        return "127.0.0.1:" + port();
    }

    /** Connections open now (each counted once, both of its sockets together). */
    public int openConnections() {
        return open.size() / 2;
    }

    /**
     * Closes every open connection on both sides: the client sees its connection drop, the target sees
     * its client go. New connections are accepted as before.
     */
    public void cutConnections() {
        for (Socket s : open) {
            closeQuietly(s);
        }
    }

    /**
     * From now on, forwards every chunk {@code delay} after reading it, in both directions
     * ({@link Duration#ZERO} for no delay). Applies to chunks read after the call.
     *
     * @throws IllegalArgumentException if negative or longer than 10 minutes
     */
    public void delay(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || delay.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("delay must be between 0 and 10 minutes, was " + delay);
        }
        this.delayNanos = delay.toNanos();
    }

    /** Stops accepting and cuts every open connection. Idempotent. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        cutConnections();
    }

    /** Whether the listening socket is still open; for this package's tests. */
    boolean listening() {
        return !listener.isClosed();
    }

    @Override
    public String toString() {
        return "TcpProxy[" + hostPort() + " -> " + targetHost + ":" + targetPort + ", open=" + openConnections() + "]";
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(new InetSocketAddress(targetHost, targetPort), 10_000);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
            } catch (IOException e) {
                closeQuietly(client); // the target is down: the client sees its connection refused late, as via a real proxy
                closeQuietly(upstream);
                continue;
            }
            open.add(client);
            open.add(upstream);
            if (closed) {
                cutConnections();
                return;
            }
            pipe(client, upstream, "up");
            pipe(upstream, client, "down");
        }
    }

    /** Forwards bytes from {@code from} to {@code to}: one thread reads, one writes when each chunk is due. */
    private void pipe(Socket from, Socket to, String direction) {
        BlockingQueue<Object[]> queue = new LinkedBlockingQueue<>(); // {byte[] chunk, Long dueNanos}
        String name = "tcp-proxy-" + port() + "-" + direction;
        Thread.ofVirtual().name(name + "-read").start(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    queue.add(new Object[] {Arrays.copyOf(buffer, n), System.nanoTime() + delayNanos});
                }
            } catch (IOException e) {
                // cut or closed by the other side
            } finally {
                queue.add(new Object[] {END, System.nanoTime() + delayNanos});
            }
        });
        Thread.ofVirtual().name(name + "-write").start(() -> {
            try (OutputStream out = to.getOutputStream()) {
                while (true) {
                    Object[] item = queue.take();
                    byte[] chunk = (byte[]) item[0];
                    long wait = (Long) item[1] - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(Duration.ofNanos(wait)); // the injected latency itself, not thread ordering
                    }
                    if (chunk == END) {
                        break;
                    }
                    out.write(chunk);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // cut
            } finally {
                // One side ended: end the whole connection, as a proxy that lost a leg does.
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        });
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            if (c instanceof Socket s && !s.isClosed()) {
                try {
                    s.setSoLinger(true, 0); // reset, not a graceful FIN: a cut, not a goodbye
                } catch (SocketException ignored) {
                    // already closed
                }
            }
            c.close();
        } catch (Exception ignored) {
            // closing is best effort
        }
    }
}
