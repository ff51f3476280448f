package dev.fenceguard.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * ShedLock's own provider suite (shedlock-test-support), unmodified, over a {@link FencedLockProvider}: a
 * backend's test class supplies the lock client; the hooks ask the backend whether a live lease holds the name.
 */
abstract class ShedLockSuite extends AbstractExtensibleLockProviderIntegrationTest {

    /** The lock client over the backend under test, the same for every test of the class. */
    abstract LockClient locks();

    /**
     * The suite's lock client over {@code backend}. Its release may take 30 s rather than the default 2 s:
     * ShedLock's fuzz test unlocks from many threads at once, and on an overloaded machine one release went
     * unanswered for 2 s, so {@code unlock()} threw as ShedLock's own providers do on a storage error.
     */
    static LockClient clientOf(LockBackend backend) {
        return LockClient.builder(backend).withReleaseTimeout(Duration.ofSeconds(30)).build();
    }

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

    /**
     * ShedLock's test, run as it is, but only on request ({@code -Dfenceguard.shedlock.short-ttl=true}): it locks
     * for 50 ms, and on a loaded machine a grant can arrive after that (both cores busy: 53 to 131 ms), when
     * fence-guard drops it as below. It passes on an idle machine.
     */
    @Test
    @Override
    @EnabledIfSystemProperty(named = "fenceguard.shedlock.short-ttl", matches = "true", disabledReason = "a 50 ms lockAtMostFor:"
            + " a grant that arrives after its TTL (a loaded machine) is not handed out; run with -Dfenceguard.shedlock.short-ttl=true")
    public void shouldTimeout() throws InterruptedException {
        super.shouldTimeout();
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
