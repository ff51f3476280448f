/**
 * For backend and helper authors: the asynchronous {@link dev.fenceguard.core.spi.LockBackend}
 * interface every lock store implements (the contract suite in {@code fence-guard-testkit} checks an
 * implementation), and {@link dev.fenceguard.core.spi.WriteRule}, the one write-rule kernel every
 * fenced-write helper uses to encode, judge and count.
 */
package dev.fenceguard.core.spi;
