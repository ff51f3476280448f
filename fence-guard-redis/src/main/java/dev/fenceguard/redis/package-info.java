/** fence-guard for redis: lock backend and fenced writes. */
package dev.fenceguard.redis;
