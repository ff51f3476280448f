/**
 * fence-guard for ShedLock: a {@code LockProvider} over any fence-guard lock backend, so that a
 * {@code @SchedulerLock} job holds a lease with a fencing token. ShedLock itself is the application's
 * dependency.
 *
 * @since 0.1
 */
module dev.fenceguard.shedlock {
    requires transitive dev.fenceguard.core;
    requires transitive net.javacrumbs.shedlock.core;

    exports dev.fenceguard.shedlock;
}
