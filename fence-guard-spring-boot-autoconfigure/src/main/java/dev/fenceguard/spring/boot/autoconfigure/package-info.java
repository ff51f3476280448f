/**
 * Spring Boot auto-configuration for fence-guard: a lock client over the application's DataSource,
 * Redis client or Firestore, fenced-write helpers, the lock table in Spring Boot's Flyway run,
 * Micrometer meters and observations, a health indicator, and the {@code @FencedLock} annotation.
 * Settings are {@link dev.fenceguard.spring.boot.autoconfigure.FenceGuardProperties} ({@code fence-guard.*});
 * {@code docs/spring-boot.md} lists them with every condition.
 *
 * @since 0.1
 */
package dev.fenceguard.spring.boot.autoconfigure;
