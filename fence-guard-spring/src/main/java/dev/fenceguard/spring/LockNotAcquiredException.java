package dev.fenceguard.spring;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;

/**
 * A {@link FencedLock} method did not run because its lock was held by someone else for the whole
 * wait. Code {@link ErrorCode#TIMEOUT}; {@link #key()} is the lock key.
 *
 * @since 0.1
 */
public final class LockNotAcquiredException extends FenceGuardException {
    private static final long serialVersionUID = 1L;

    /**
     * @param key the lock key
     * @param method the method that did not run, for the message
     * @param wait how long the call waited
     */
    public LockNotAcquiredException(String key, String method, java.time.Duration wait) {
        super(ErrorCode.TIMEOUT, key, "@FencedLock " + method + " did not run: the lock was not had within " + wait);
    }
}
