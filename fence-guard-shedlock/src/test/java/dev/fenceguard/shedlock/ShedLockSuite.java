package dev.fenceguard.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockClient;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's own provider suite (shedlock-test-support), unmodified, over a {@link FencedLockProvider}: a
 * backend's test class supplies the lock client; the hooks ask the backend whether a live lease holds the name.
 */
abstract class ShedLockSuite extends AbstractExtensibleLockProviderIntegrationTest {

    /** The lock client over the backend under test, the same for every test of the class. */
    abstract LockClient locks();

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return FencedLockProvider.builder(locks()).build();
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(locks().lookup(lockName)).as("a live lease on '%s'", lockName).isPresent();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(locks().lookup(lockName)).as("no live lease on '%s'", lockName).isEmpty();
    }

    /** The one test of the suite that fence-guard does not pass, by design; see the reason. */
    @Test
    @Override
    @Disabled("asks for a lock with lockAtMostFor = 2 ms and expects it granted: fence-guard's LockClient hands out a "
            + "lease only while it is valid, and drops a grant that arrives after its TTL has run out since the request "
            + "was sent (a lease that is a zombie from birth). A round trip over 2 ms (PostgreSQL, MariaDB, Firestore "
            + "here; Redis under load) gives an empty Optional where the test expects a lock.")
    public void shouldNotBeAbleToExtendExpiredLock() {}
}
