/**
 * Fenced SQL writes that take part in Spring-managed transactions.
 *
 * @since 0.1
 */
package dev.fenceguard.spring.jdbc;
