package dev.fenceguard.core;

/**
 * Work done while holding a lock; receives the lease so it can pass {@link Lease#fence()} to every
 * write. May throw {@code E}, which {@link LockClient#withLock} passes on unchanged.
 *
 * @param <T> the result type; must not be null
 * @param <E> the checked exception the work may throw ({@link RuntimeException} if none)
 * @since 0.1
 */
@FunctionalInterface
public interface LockedWork<T, E extends Exception> {
    T run(Lease lease) throws E;
}
