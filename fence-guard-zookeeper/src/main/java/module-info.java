/**
 * fence-guard on Apache ZooKeeper through Apache Curator: a lock backend whose fence is the {@code czxid}
 * of the lock node each grant creates. Curator's jars have no module names of their own (the names below
 * are derived from the jar file names), and ZooKeeper 3.9's two jars ({@code zookeeper},
 * {@code zookeeper-jute}) hold parts of the same packages, so they cannot both be named modules: keep
 * them on the class path, which this module reads (docs/modules.md).
 *
 * @since 0.1
 */
module dev.fenceguard.zookeeper {
    requires transitive dev.fenceguard.core;
    requires transitive curator.framework;
    requires curator.client;
    requires org.slf4j;

    exports dev.fenceguard.zookeeper;
}
