package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.spi.LockBackend;
import java.util.function.Supplier;

/**
 * A lock backend the application could use, registered by each backend's configuration when its
 * classes and client bean are present; {@link FenceGuardAutoConfiguration} picks one (by
 * {@code fence-guard.backend} when there are several) and only that one is built.
 */
final class BackendCandidate {
    private final FenceGuardProperties.Backend kind;
    private final String source;
    private final Supplier<LockBackend> factory;

    BackendCandidate(FenceGuardProperties.Backend kind, String source, Supplier<LockBackend> factory) {
        this.kind = kind;
        this.source = source;
        this.factory = factory;
    }

    FenceGuardProperties.Backend kind() {
        return kind;
    }

    /** What it is built on, for error messages ("the DataSource bean 'dataSource'"). */
    String source() {
        return source;
    }

    LockBackend create() {
        return factory.get();
    }
}
