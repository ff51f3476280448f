/**
 * Fenced SQL writes that take part in Spring-managed transactions.
 *
 * @since 0.3
 */
package dev.fenceguard.spring.jdbc;
