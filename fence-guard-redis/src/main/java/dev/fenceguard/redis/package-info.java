/**
 * fence-guard on Redis through Lettuce: start at {@link dev.fenceguard.redis.FenceGuardRedis}, which hands
 * out the lock backend, the idempotency backend, the flight store and the fenced writes (blocking, and
 * {@code async()}) over one connection.
 */
package dev.fenceguard.redis;
