package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;

/**
 * An idempotency key came back with a request whose fingerprint differs from the one it was first
 * claimed with: the key is being used for two different operations. Nothing was written and the work
 * did not run. Code {@link ErrorCode#IDEMPOTENCY_CONFLICT}.
 *
 * @since 0.1
 */
public final class IdempotencyConflictException extends FenceGuardException {

    private static final long serialVersionUID = 1L;

    /** @param key the idempotency key */
    public IdempotencyConflictException(String key) {
        super(ErrorCode.IDEMPOTENCY_CONFLICT, key, "the key was first used with a different request fingerprint; "
                + "the work did not run and nothing was written");
    }
}
