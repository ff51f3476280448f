package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class TestkitReadmeTest {

    @Test
    void theReadmeShowsTheRunnableExampleAsItIs() throws Exception {
        // Maven runs tests in the module's folder.
        String readme = Files.readString(Path.of("README.md"));
        List<String> file = Files.readAllLines(Path.of("src/test/java/com/example/orders/OrderShippingTest.java"));
        // The first and last lines mark the file as the README's sample for the examples' SamplesTest.
        assertThat(file.getFirst()).isEqualTo("// fence-guard-testkit/README.md: runnable example (begin)");
        assertThat(file.getLast()).isEqualTo("// fence-guard-testkit/README.md: runnable example (end)");
        String example = String.join("\n", file.subList(1, file.size() - 1)) + "\n";
        assertThat(readme).contains("```java\n" + example + "```\n");
    }
}
