/**
 * fence-guard for Spring applications, with or without Spring Boot: the {@code @FencedLock} annotation
 * (turned on by {@code @EnableFencedLocks}, or by the Spring Boot auto-configuration) and fenced SQL
 * writes that join Spring-managed transactions. spring-jdbc, spring-tx and fence-guard-jooq are read only
 * when the application's module graph has them.
 *
 * @since 0.1
 */
module dev.fenceguard.spring {
    requires transitive dev.fenceguard.core;
    requires transitive spring.context;
    requires transitive spring.beans;
    requires transitive spring.core;
    requires spring.aop;
    requires spring.expression;

    requires static dev.fenceguard.jooq;
    requires static spring.jdbc;
    requires static spring.tx;
    requires static org.jooq;
    requires static java.sql;

    exports dev.fenceguard.spring;
    exports dev.fenceguard.spring.jdbc;
    // The advisor is built by @EnableFencedLocks here and by the Spring Boot auto-configuration; not an API.
    // Spring instantiates the registrar of @EnableFencedLocks (a public class) by reflection.
    exports dev.fenceguard.spring.internal to dev.fenceguard.spring.boot.autoconfigure, spring.core, spring.beans, spring.context;
}
