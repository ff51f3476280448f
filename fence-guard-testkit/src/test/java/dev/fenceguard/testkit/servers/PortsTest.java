package dev.fenceguard.testkit.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import org.junit.jupiter.api.Test;

class PortsTest {

    @Test
    void aRefusedPortLiesBelowTheEphemeralRangeAndRefusesConnections() {
        int low = Ports.ephemeralLow();
        assertThat(low).as("read from the machine (Linux default 32768)").isBetween(1_024, 65_535);
        for (int i = 0; i < 20; i++) {
            int port = Ports.refused();
            assertThat(port).isBetween(10_000, Math.max(low, 11_024) - 1);
            // Below the ephemeral range a connect cannot meet itself, and nothing here binds such ports.
            assertThatThrownBy(() -> new Socket(InetAddress.getLoopbackAddress(), port).close())
                    .as("connect to %d", port).isInstanceOf(ConnectException.class);
        }
    }
}
