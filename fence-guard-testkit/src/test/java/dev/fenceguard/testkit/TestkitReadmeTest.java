package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class TestkitReadmeTest {

    @Test
    void theReadmeShowsTheRunnableExampleAsItIs() throws Exception {
        // Maven runs tests in the module's folder.
        String readme = Files.readString(Path.of("README.md"));
        String example = Files.readString(Path.of("src/test/java/com/example/orders/OrderShippingTest.java"));
        assertThat(readme).contains("```java\n" + example + "```\n");
    }
}
