package dev.fenceguard.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ZombieDemoTest {

    @Test
    void demoShowsTheUnfencedOverwriteAndTheFencedRejection() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int status = ZombieDemo.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(status).isZero();
        assertThat(out).contains("without fencing the order ends as: paid by A")
                .contains("with fence-guard the order ends as: paid by B")
                .contains("Stale[resource=order:42, presentedFence=1, currentFence=2")
                .contains("OK: the stale write was rejected at the resource");
    }
}
