/** fence-guard for ZooKeeper: a lock backend whose fence is the lock node's {@code czxid}. */
package dev.fenceguard.zookeeper;
