/**
 * fence-guard's Reactor face: {@code Mono}s over the asynchronous lock client and fenced writes.
 *
 * @since 0.1
 */
module dev.fenceguard.reactor {
    requires transitive dev.fenceguard.core;
    requires transitive reactor.core;
    requires transitive org.reactivestreams;
    requires org.slf4j;

    exports dev.fenceguard.reactor;
}
