/**
 * fence-guard for Spring Boot: auto-configuration of the lock client, backends, fenced writes, metrics,
 * observations and health, and of fence-guard-spring's {@code @FencedLock} annotation. Each backend and
 * integration applies only when its classes are present: all are read only when the application's module
 * graph has them.
 *
 * @since 0.1
 */
module dev.fenceguard.spring.boot.autoconfigure {
    requires transitive dev.fenceguard.core;
    requires transitive dev.fenceguard.spring;
    requires transitive spring.boot.autoconfigure;
    requires transitive spring.boot;
    requires transitive spring.context;
    requires transitive spring.beans;
    requires transitive spring.core;
    requires spring.aop;
    requires org.slf4j;

    requires static dev.fenceguard.jdbc;
    requires static dev.fenceguard.jooq;
    requires static dev.fenceguard.redis;
    requires static dev.fenceguard.firestore;
    requires static dev.fenceguard.migrations;
    requires static dev.fenceguard.spring.integration;
    requires static spring.integration.core;
    requires static dev.fenceguard.shedlock;
    requires static net.javacrumbs.shedlock.core;
    requires static spring.boot.flyway;
    requires static spring.boot.health;
    requires static spring.data.redis;
    requires static spring.jdbc;
    requires static spring.tx;
    requires static micrometer.core;
    requires static micrometer.observation;
    requires static lettuce.core;
    requires static google.cloud.firestore;
    requires static flyway.core;
    requires static java.sql;

    exports dev.fenceguard.spring.boot.autoconfigure;
    // Spring creates the auto-configurations' nested, package-private configuration classes and calls
    // their package-private @Bean methods by reflection, after setAccessible (from spring.core's
    // ReflectionUtils): that needs the package open to it, and to nobody else.
    opens dev.fenceguard.spring.boot.autoconfigure to spring.core, spring.beans, spring.context;
}
