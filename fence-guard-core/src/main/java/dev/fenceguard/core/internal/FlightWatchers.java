package dev.fenceguard.core.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.spi.FlightStore.FlightWatch;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchers of a flight store, by flight key: what a store's one listener (a LISTEN connection, a
 * pub/sub subscription) dispatches its notifications to. Thread-safe.
 */
public final class FlightWatchers {

    private static final Logger log = LoggerFactory.getLogger(FlightWatchers.class);

    private final Map<String, Set<Runnable>> byKey = new ConcurrentHashMap<>();

    /**
     * The failure of a watch asked of a closed store's listener: {@code UNAVAILABLE}, as a lost listener's is, so
     * the waiter falls back to polling. One text for every store.
     */
    public static FenceGuardException storeClosed() {
        return new FenceGuardException(ErrorCode.UNAVAILABLE, null, "the flight store is closed; waiters poll");
    }

    /** Registers {@code onChange} for {@code key}; closing the watch (idempotent) removes it. */
    public FlightWatch add(String key, Runnable onChange) {
        byKey.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(onChange);
        return () -> byKey.computeIfPresent(key, (k, set) -> {
            set.remove(onChange);
            return set.isEmpty() ? null : set;
        });
    }

    /** Calls the watchers of {@code key}, on this thread; one that throws is logged and the others still run. */
    public void tell(String key) {
        Set<Runnable> set = byKey.get(key);
        if (set != null) {
            for (Runnable r : List.copyOf(set)) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    log.warn("a singleflight watcher threw; ignored", e);
                }
            }
        }
    }

    /** Calls every watcher: after a lost listener, so they look again now rather than at their next poll. */
    public void tellAll() {
        List.copyOf(byKey.keySet()).forEach(this::tell);
    }

    /** How many watchers {@code key} has. */
    public int count(String key) {
        Set<Runnable> set = byKey.get(key);
        return set == null ? 0 : set.size();
    }
}
