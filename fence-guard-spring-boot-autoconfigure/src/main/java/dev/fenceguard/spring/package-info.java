/**
 * fence-guard for Spring applications: the {@link dev.fenceguard.spring.FencedLock} annotation and its
 * exception. The Spring Boot auto-configuration ({@code dev.fenceguard.spring.boot.autoconfigure})
 * applies it.
 *
 * @since 0.1
 */
package dev.fenceguard.spring;
