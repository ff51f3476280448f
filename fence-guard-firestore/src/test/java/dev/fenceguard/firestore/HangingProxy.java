package dev.fenceguard.firestore;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy in front of the emulator that a test can make fail mid-call, the way a server
 * does when it is paused or killed:
 * <ul>
 *   <li>{@link #hang()}: every connection stays open, but no byte passes either way any more (what a
 *       client sees of a paused server, or of a network path that silently drops packets): calls get
 *       no answer and no error;</li>
 *   <li>{@link #vanish()}: every connection is closed and the port refuses new ones (a killed server).</li>
 * </ul>
 * It also records when it last passed bytes from the server to the client: no answer can reach the
 * client after that, which bounds a lease's local deadline from above. Each connection uses two virtual
 * threads.
 */
final class HangingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean hanging;
    private volatile boolean closed;
    private volatile long lastToClientNanos = System.nanoTime();

    private HangingProxy(ServerSocket listener, InetSocketAddress target) {
        this.listener = listener;
        this.target = target;
    }

    /** A proxy on a free 127.0.0.1 port in front of {@code hostPort}. */
    static HangingProxy start(String hostPort) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        InetSocketAddress target = new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        HangingProxy proxy = new HangingProxy(listener, target);
        Thread.ofVirtual().name("hanging-proxy-accept").start(proxy::acceptLoop);
        return proxy;
    }

    /** {@code host:port} to point a client at. */
    String hostPort() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** From now on no byte passes either way; connections stay open. */
    void hang() {
        hanging = true;
    }

    /** Closes every connection and stops accepting: connecting is refused from now on. */
    void vanish() {
        close();
    }

    /** {@link System#nanoTime()} when a byte last went from the server to the client. */
    long lastToClientNanos() {
        return lastToClientNanos;
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        for (Socket s : open) {
            closeQuietly(s);
        }
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                open.add(client);
                open.add(server);
                if (closed) {
                    closeQuietly(client);
                    closeQuietly(server);
                    return;
                }
                server.connect(target, 5_000);
                Thread.ofVirtual().name("hanging-proxy-up").start(() -> pump(client, server, false));
                Thread.ofVirtual().name("hanging-proxy-down").start(() -> pump(server, client, true));
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean toClient) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                if (hanging) {
                    continue; // swallowed: the peer waits for an answer that never comes
                }
                out.write(buffer, 0, n);
                out.flush();
                if (toClient) {
                    lastToClientNanos = System.nanoTime();
                }
            }
        } catch (IOException e) {
            // a side closed: close both
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            open.remove(from);
            open.remove(to);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // already closed
        }
    }
}
