package dev.fenceguard.core;

/**
 * What went wrong, independent of the backend; carried by every {@link FenceGuardException}.
 *
 * @since 0.1
 */
public enum ErrorCode {
    /** The backend could not be reached or refused the connection. Usually worth retrying. */
    UNAVAILABLE,
    /** The backend did not answer in time. The operation may or may not have taken effect. */
    TIMEOUT,
    /** The backend rejected our credentials or permissions. */
    AUTH,
    /** The request was malformed for this backend (e.g. a value of the wrong type at a key). */
    INVALID_ARGUMENT,
    /** The lock key has used up its fence tokens ({@link FenceToken#MAX_VALUE}). No lock was taken. */
    FENCE_EXHAUSTED,
    /** A write carried a fence older than the one the resource already holds. */
    STALE_FENCE,
    /**
     * An idempotency key was used again with a request whose fingerprint differs from the first one's:
     * the same key names two different operations. Nothing was written.
     *
     * @since 0.1
     */
    IDEMPOTENCY_CONFLICT,
    /** Anything else: a bug, or a backend answer fence-guard does not understand. */
    INTERNAL
}
