/** Implementation details of fence-guard-redis; not an API. */
package dev.fenceguard.redis.internal;
