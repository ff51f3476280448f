package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The purges the Spring Boot starter runs on a schedule when {@code fence-guard.purge.enabled=true}
 * (docs/fence-lifecycle.md): named targets, each a function from a {@link Purge} to its
 * {@link PurgeResult}, run one after the other on every {@code fence-guard.purge.interval}. Declare one
 * bean (or several: their targets are joined; a name used twice fails startup):
 *
 * <pre>{@code
 * @Bean
 * FencePurges fencePurges(DataSource dataSource) {
 *     return FencePurges.of("orders", ORDERS.on(dataSource)::purge)       // a FencedTable built withHorizon
 *             .and("payments", PAYMENTS.on(dataSource)::purge);
 * }
 * }</pre>
 *
 * <p>Nothing is found by scanning: only what a {@code FencePurges} bean names is purged, so a table is
 * purged only where the application says so (its writers must all have the horizon the purge assumes).
 * Any store's purge with the shape {@code PurgeResult purge(Purge)} is a target. Give a SQL target the
 * plain {@code DataSource} (each batch then commits on its own), not a transaction-bound one.
 *
 * <p>Immutable and thread-safe; {@link #and} returns a copy.
 *
 * @since 0.1
 */
public final class FencePurges {

    /** One purge: runs {@code purge} (bounded by its batch size and time) and says what it did. */
    @FunctionalInterface
    public interface Target {
        /**
         * Purges what the store's rule lets go, starting after {@link Purge#startAfter()}.
         *
         * @return what it removed and, if it stopped at its time bound, where to resume
         */
        PurgeResult purge(Purge purge);
    }

    private final Map<String, Target> targets;

    private FencePurges(Map<String, Target> targets) {
        this.targets = Collections.unmodifiableMap(targets);
    }

    /**
     * One target, {@code name} (used in logs and as the {@code target} tag of the purge meters).
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or longer than 100 characters
     */
    public static FencePurges of(String name, Target target) {
        return new FencePurges(Map.of()).and(name, target);
    }

    /**
     * These targets and {@code name}, run after them.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank, longer than 100 characters, or already a target here
     */
    public FencePurges and(String name, Target target) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(target, "target");
        if (name.isBlank() || name.length() > 100) {
            throw new IllegalArgumentException("a purge target's name must be 1 to 100 characters, not blank, was '" + name + "'");
        }
        if (targets.containsKey(name)) {
            throw new IllegalArgumentException("purge target '" + name + "' is named twice");
        }
        Map<String, Target> copy = new LinkedHashMap<>(targets);
        copy.put(name, target);
        return new FencePurges(copy);
    }

    /** The targets by name, in the order they run. */
    public Map<String, Target> targets() {
        return targets;
    }

    @Override
    public String toString() {
        return "FencePurges" + targets.keySet();
    }
}
