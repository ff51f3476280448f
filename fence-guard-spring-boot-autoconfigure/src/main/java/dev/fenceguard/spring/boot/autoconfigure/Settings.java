package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.FenceStrategy;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Applies a {@code fence-guard.*} value to a backend module's builder, so that a value that builder
 * refuses fails startup with the property's name in front of the builder's own message.
 */
final class Settings {
    private Settings() {}

    /** Calls {@code setter} with {@code value} unless it is null (the builder's default then stays). */
    static <T> void apply(String property, T value, Consumer<T> setter) {
        if (value == null) {
            return;
        }
        try {
            setter.accept(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid " + FenceGuardProperties.PREFIX + "." + property + " '" + value + "': "
                    + e.getMessage(), e);
        }
    }

    /**
     * Applies the settings every store entry shares ({@code fence-guard.<store>.call-timeout}, {@code horizon},
     * {@code clock-margin}, and {@code fence-guard.fence-strategy}), then builds; a combination the builder refuses
     * in {@code build()} fails naming {@code fence-guard.<store>}.
     */
    static <T> T store(String store, FenceGuardProperties.Store settings, FenceStrategy strategy, Consumer<Duration> callTimeout,
            Consumer<Duration> horizon, Consumer<Duration> clockMargin, Consumer<FenceStrategy> fenceStrategy, Supplier<T> build) {
        apply(store + ".call-timeout", settings.getCallTimeout(), callTimeout);
        apply(store + ".horizon", settings.getHorizon(), horizon);
        apply(store + ".clock-margin", settings.getClockMargin(), clockMargin);
        apply("fence-strategy", strategy, fenceStrategy);
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            // Checks across settings (prefixes that must differ, a horizon with DENSE fences) run in build().
            throw new IllegalArgumentException("invalid " + FenceGuardProperties.PREFIX + "." + store + " settings: " + e.getMessage(), e);
        }
    }
}
