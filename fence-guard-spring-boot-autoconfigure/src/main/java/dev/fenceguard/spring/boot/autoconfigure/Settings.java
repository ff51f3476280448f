package dev.fenceguard.spring.boot.autoconfigure;

import java.util.function.Consumer;

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
}
