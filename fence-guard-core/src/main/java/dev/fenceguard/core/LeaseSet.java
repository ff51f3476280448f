package dev.fenceguard.core;

import java.util.List;
import java.util.NoSuchElementException;

/**
 * Several leases taken together by {@link LockClient#acquireAll}, in the global key order. Closing the
 * set releases every lease, in reverse order; it is idempotent and never throws.
 *
 * @param leases the leases, sorted by key
 * @since 0.1
 */
public record LeaseSet(List<Lease> leases) implements AutoCloseable {

    public LeaseSet {
        leases = List.copyOf(leases);
    }

    /**
     * The lease for {@code key}.
     *
     * @throws NoSuchElementException if the set holds no lease for that key
     * @throws IllegalArgumentException if {@code key} is not a valid lock key
     */
    public Lease get(String key) {
        LockKey wanted = LockKey.of(key);
        for (Lease lease : leases) {
            if (lease.key().equals(wanted)) {
                return lease;
            }
        }
        throw new NoSuchElementException("no lease for key '" + key + "' in this set");
    }

    /** Whether every lease is still {@link Lease#isValid() valid}. */
    public boolean isValid() {
        return leases.stream().allMatch(Lease::isValid);
    }

    @Override
    public void close() {
        for (int i = leases.size() - 1; i >= 0; i--) {
            leases.get(i).close();
        }
    }
}
