package dev.fenceguard.testkit.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TcpProxyTest {

    /** An echo server; counts down {@link #serverSideClosed} when a connection ends on its side. */
    private ServerSocket echo;
    private final CountDownLatch serverSideClosed = new CountDownLatch(1);

    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (true) {
                Socket s;
                try {
                    s = echo.accept();
                } catch (IOException e) {
                    return;
                }
                Thread.ofVirtual().start(() -> {
                    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                        byte[] b = new byte[1024];
                        int n;
                        while ((n = in.read(b)) >= 0) {
                            out.write(b, 0, n);
                            out.flush();
                        }
                    } catch (IOException e) {
                        // reset by the proxy
                    } finally {
                        serverSideClosed.countDown();
                    }
                });
            }
        });
    }

    @AfterEach
    void stopEcho() throws IOException {
        echo.close();
    }

    private static String roundTrip(Socket s, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        s.getOutputStream().write(bytes);
        s.getOutputStream().flush();
        byte[] got = s.getInputStream().readNBytes(bytes.length);
        return new String(got, StandardCharsets.UTF_8);
    }

    private static Socket connect(TcpProxy proxy) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
        s.setSoTimeout(10_000); // a guard: a broken proxy fails the test instead of hanging it
        return s;
    }

    @Test
    void bytesFlowBothWaysThroughTheProxy() throws IOException {
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort()); Socket s = connect(proxy)) {
            assertThat(roundTrip(s, "hello")).isEqualTo("hello");
            assertThat(roundTrip(s, "x".repeat(100_000))).hasSize(100_000);
            assertThat(proxy.openConnections()).isEqualTo(1);
        }
    }

    @Test
    void cuttingDropsBothSidesAndNewConnectionsStillWork() throws Exception {
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort())) {
            Socket s = connect(proxy);
            assertThat(roundTrip(s, "before")).isEqualTo("before");
            proxy.cutConnections();
            assertThatThrownBy(() -> {
                int read = s.getInputStream().read();
                if (read < 0) {
                    throw new IOException("end of stream");
                }
            }).as("the client's connection is dropped").isInstanceOf(IOException.class);
            assertThat(serverSideClosed.await(10, TimeUnit.SECONDS)).as("the target's side is dropped too").isTrue();
            s.close();
            try (Socket again = connect(proxy)) {
                assertThat(roundTrip(again, "after")).isEqualTo("after");
            }
        }
    }

    @Test
    void aDelayHoldsEveryChunkInBothDirections() throws IOException {
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort()); Socket s = connect(proxy)) {
            proxy.delay(Duration.ofMillis(300));
            long start = System.nanoTime();
            assertThat(roundTrip(s, "slow")).isEqualTo("slow");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(600));
            proxy.delay(Duration.ZERO);
            assertThat(roundTrip(s, "fast again")).isEqualTo("fast again");
        }
    }

    /*
     * Not "a connect to the old port is refused": once released, that port may be bound again by anything on
     * the machine, and a loopback connect to a free ephemeral port can even connect to itself (a CI run saw
     * such a connect succeed). What close() owns is its listener and its connections, so that is checked.
     */
    @Test
    void closeStopsAcceptingAndCutsOpenConnections() throws IOException {
        TcpProxy proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort());
        Socket s = connect(proxy);
        assertThat(roundTrip(s, "before")).isEqualTo("before");
        assertThat(proxy.listening()).isTrue();
        proxy.close();
        proxy.close();
        assertThat(proxy.listening()).as("the listening socket is closed").isFalse();
        assertThatThrownBy(() -> {
            int read = s.getInputStream().read();
            if (read < 0) {
                throw new IOException("end of stream");
            }
        }).as("the open connection is dropped").isInstanceOf(IOException.class);
        s.close();
    }

    @Test
    void badArgumentsAreRefusedBeforeAnyPortIsOpened() {
        assertThatThrownBy(() -> TcpProxy.start(" ", 80)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("target host must not be blank");
        assertThatThrownBy(() -> TcpProxy.start("127.0.0.1", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("target port must be in 1..65535, was 0");
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort())) {
            assertThatThrownBy(() -> proxy.delay(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("delay must be between 0 and 10 minutes, was PT-0.001S");
        }
    }
}
