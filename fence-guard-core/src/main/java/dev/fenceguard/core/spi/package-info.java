/**
 * For backend authors: the {@link dev.fenceguard.core.spi.LockBackend} interface every lock store
 * implements. The contract suite in {@code fence-guard-testkit} checks an implementation.
 */
package dev.fenceguard.core.spi;
