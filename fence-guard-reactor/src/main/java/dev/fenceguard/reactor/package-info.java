/**
 * {@link reactor.core.publisher.Mono} faces of fence-guard's lock client and primitives, for Reactor,
 * WebFlux and other Reactive Streams code: {@link dev.fenceguard.reactor.ReactiveLockClient},
 * {@link dev.fenceguard.reactor.ReactiveSingleflight}, {@link dev.fenceguard.reactor.ReactiveIdempotencyStore}
 * and {@link dev.fenceguard.reactor.ReactiveLeaderElection}.
 *
 * @since 0.1
 */
package dev.fenceguard.reactor;
