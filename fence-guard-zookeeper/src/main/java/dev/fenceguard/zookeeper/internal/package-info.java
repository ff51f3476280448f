/** Implementation details of fence-guard-zookeeper; not an API. */
package dev.fenceguard.zookeeper.internal;
