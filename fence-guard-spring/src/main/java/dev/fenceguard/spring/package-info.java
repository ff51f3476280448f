/**
 * fence-guard for Spring applications, with or without Spring Boot: the
 * {@link dev.fenceguard.spring.FencedLock} annotation, its exception, and
 * {@link dev.fenceguard.spring.EnableFencedLocks}, which turns it on without Spring Boot (the Spring Boot
 * auto-configuration, {@code dev.fenceguard.spring.boot.autoconfigure}, turns it on otherwise).
 *
 * @since 0.1
 */
package dev.fenceguard.spring;
