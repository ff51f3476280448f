/**
 * Singleflight across processes, fenced: among all processes that ask for the same key at once, one
 * computes under a lease and publishes its result with its fence; the others wait for that result. A
 * zombie's late publish, after a newer flight started, is refused by the store. Start with
 * {@link dev.fenceguard.core.singleflight.Singleflight}.
 *
 * @since 0.1
 */
package dev.fenceguard.core.singleflight;
