package dev.fenceguard.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The generated configuration metadata (what IDEs complete) names every property, with its description. */
class ConfigurationMetadataTest {

    @Test
    void everyFenceGuardPropertyIsInTheGeneratedMetadata() throws IOException {
        String json = null;
        for (URL url : Collections.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                if (text.contains("\"fence-guard\"")) {
                    json = text;
                }
            }
        }
        assertThat(json).as("fence-guard's spring-configuration-metadata.json on the class path").isNotNull();
        List<String> names = new ArrayList<>();
        Matcher m = Pattern.compile("\"name\"\\s*:\\s*\"(fence-guard\\.[a-z.-]+)\"").matcher(json);
        while (m.find()) {
            names.add(m.group(1));
        }
        assertThat(names).contains("fence-guard.backend", "fence-guard.default-ttl", "fence-guard.default-wait",
                "fence-guard.call-timeout", "fence-guard.release-timeout", "fence-guard.fence-strategy",
                "fence-guard.jdbc.schema", "fence-guard.jdbc.table", "fence-guard.jdbc.flyway",
                "fence-guard.jdbc.verify-table", "fence-guard.redis.key-prefix", "fence-guard.redis.fence-key-prefix",
                "fence-guard.redis.call-timeout", "fence-guard.redis.horizon", "fence-guard.redis.clock-margin",
                "fence-guard.firestore.collection", "fence-guard.firestore.call-timeout", "fence-guard.firestore.horizon",
                "fence-guard.firestore.clock-margin",
                "fence-guard.metrics.enabled", "fence-guard.observations.enabled", "fence-guard.annotation.enabled",
                "fence-guard.annotation.order", "fence-guard.spring-integration.enabled", "fence-guard.spring-integration.ttl",
                "fence-guard.shedlock.enabled", "fence-guard.purge.enabled", "fence-guard.purge.interval",
                "fence-guard.purge.batch-size", "fence-guard.purge.max-duration");
        assertThat(json).contains("\"defaultValue\": \"30s\"", "\"defaultValue\": \"fence_guard_locks\"",
                "The lock backend. Needed only when the application has more than one");
    }
}
