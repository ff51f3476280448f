package dev.fenceguard.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * {@code fenceguard.purge.run}: a timer per purge target and outcome ({@code complete}, {@code stopped},
 * {@code failed}). Target names are chosen in the application's code, so the tag values are bounded. Its
 * own class so that the schedule loads without Micrometer.
 */
final class PurgeRunMeters implements FencePurgeSchedule.Meter {

    private final MeterRegistry registry;

    PurgeRunMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void ran(String target, String outcome, Duration took) {
        Timer.builder("fenceguard.purge.run").description("scheduled purges of fence records, by target and outcome")
                .tag("target", target).tag("outcome", outcome).register(registry).record(took);
    }
}
