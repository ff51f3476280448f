/**
 * {@link reactor.core.publisher.Mono} faces of fence-guard's asynchronous lock client, for Reactor,
 * WebFlux and other Reactive Streams code: see {@link dev.fenceguard.reactor.ReactiveLockClient}.
 *
 * @since 0.1
 */
package dev.fenceguard.reactor;
