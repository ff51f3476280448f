/**
 * The server side of an idempotency key, fenced: {@link dev.fenceguard.core.idempotency.IdempotencyStore}
 * runs a piece of work at most once per key and request fingerprint, records its outcome under the
 * holder's lease fence, and refuses a zombie's late record. Storage is an
 * {@link dev.fenceguard.core.spi.IdempotencyBackend} from a backend module (PostgreSQL, Redis,
 * Firestore) or {@link dev.fenceguard.core.memory.InMemoryIdempotencyBackend}.
 *
 * @since 0.1
 */
package dev.fenceguard.core.idempotency;
