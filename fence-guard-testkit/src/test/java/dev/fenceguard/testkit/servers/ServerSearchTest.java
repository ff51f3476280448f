package dev.fenceguard.testkit.servers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ServerSearchTest {

    private static final String UNSET = "FENCE_GUARD_TEST_SURELY_UNSET_VARIABLE";

    @Test
    void theEnvironmentVariableWinsWhenItsServerAnswersAndNothingElseIsTried() {
        // PATH is set on every machine that runs these tests; the "server" is its value.
        List<String> tried = new ArrayList<>();
        String found = ServerSearch.find("Thing", "PATH", "x", value -> value, () -> {
            tried.add("container");
            return "container";
        }, "local", () -> {
            tried.add("local");
            return "local";
        });
        assertThat(found).isEqualTo(System.getenv("PATH").trim());
        assertThat(tried).isEmpty();
    }

    @Test
    void whenEveryWayFailsTheErrorNamesTheThreeWaysAndWhyEachFailed() {
        // Tried: a variable that is set but whose server refuses, no usable container, no local server.
        assertThatThrownBy(() -> ServerSearch.find("Thing", "PATH", "thing://127.0.0.1:1", value -> {
            throw new IllegalStateException("refused at the variable's address");
        }, () -> {
            throw new IllegalStateException("no image here");
        }, "local thing", () -> {
            throw new IllegalStateException("not installed");
        }))
                .isInstanceOf(ServerUnavailableException.class)
                .hasMessageContaining("No Thing for the tests")
                .hasMessageContaining("the environment variable PATH (e.g. thing://127.0.0.1:1)")
                .hasMessageContaining("PATH=")
                .hasMessageContaining("refused at the variable's address")
                .hasMessageContaining("Testcontainers: ")
                .hasMessageContaining("local thing: java.lang.IllegalStateException: not installed");
    }

    @Test
    void anUnsetVariableIsReportedAndTheLocalServerIsUsed() {
        assertThat(System.getenv(UNSET)).as("precondition").isNull();
        String found = ServerSearch.find("Thing", UNSET, "x", value -> {
            throw new AssertionError("not called for an unset variable");
        }, () -> {
            throw new IllegalStateException("no image here");
        }, "local", () -> "the local one");
        assertThat(found).isEqualTo("the local one");
        assertThatThrownBy(() -> ServerSearch.find("Thing", UNSET, "x", value -> value, () -> {
            throw new IllegalStateException("no image here");
        }, "local", () -> {
            throw new IllegalStateException("none");
        })).hasMessageContaining(UNSET + " is not set");
    }
}
