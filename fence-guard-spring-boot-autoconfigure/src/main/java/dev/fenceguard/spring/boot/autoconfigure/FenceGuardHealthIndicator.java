package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockClient;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * UP when the lock backend answers a lookup (one read, bounded by the client's call timeout; it takes
 * no lock and writes nothing), DOWN with the error code when it does not. Details: the backend's name.
 *
 * @since 0.1
 */
public final class FenceGuardHealthIndicator implements HealthIndicator {

    /** The key looked up: any key would do, since a lookup only reads. */
    static final String PROBE_KEY = "fence-guard:health";

    private final LockClient client;

    /** @param client the client whose backend is checked */
    public FenceGuardHealthIndicator(LockClient client) {
        this.client = client;
    }

    @Override
    public Health health() {
        String backend = client.backend().name();
        try {
            client.lookup(PROBE_KEY);
            return Health.up().withDetail("backend", backend).build();
        } catch (FenceGuardException e) {
            return Health.down().withDetail("backend", backend).withDetail("error", e.code().name()).build();
        }
    }
}
