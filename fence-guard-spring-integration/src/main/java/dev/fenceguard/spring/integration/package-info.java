/**
 * A Spring Integration {@code LockRegistry} whose locks are fenced:
 * {@link dev.fenceguard.spring.integration.FencedLockRegistry} hands out
 * {@link dev.fenceguard.spring.integration.FencedDistributedLock}s, which keep Spring's thread-owned, reentrant
 * {@code Lock} contract and give the thread that holds one the {@code Lease} and its fence, to pass to every
 * write the lock protects. {@code LockRegistryLeaderInitiator} runs on it unchanged; its leader reads its
 * term from the lock. See {@code docs/spring-integration.md}.
 *
 * @since 0.1
 */
package dev.fenceguard.spring.integration;
