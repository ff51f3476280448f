/**
 * fence-guard core: fencing tokens, leases, the lock client, the write rule and the outcome of a
 * fenced write.
 *
 * <p>Start with {@link dev.fenceguard.core.LockClient}; guard every write with a helper from a
 * backend module (fence-guard-jdbc, -redis, -firestore) that applies {@link dev.fenceguard.core.FencePolicy}
 * atomically at the resource.
 */
package dev.fenceguard.core;
