/**
 * fence-guard for Spring Integration: {@link dev.fenceguard.spring.integration.FencedLockRegistry}, a
 * {@code LockRegistry} over any fence-guard lock backend whose locks carry the fence of their lease.
 * spring-integration-core is the application's (an automatic module, {@code spring.integration.core}).
 *
 * @since 0.1
 */
module dev.fenceguard.spring.integration {
    requires transitive dev.fenceguard.core;
    requires transitive spring.integration.core;
    requires transitive spring.context;
    requires org.slf4j;

    exports dev.fenceguard.spring.integration;
}
