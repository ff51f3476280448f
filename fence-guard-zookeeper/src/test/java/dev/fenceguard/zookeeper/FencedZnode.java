package dev.fenceguard.zookeeper;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.WriteOutcome;
import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A resource guarded by fences on ZooKeeper itself, for the tests: a znode whose data is the last fence
 * written. A write with fence {@code f} reads the node and its version, and sets it to {@code f} only if
 * {@code f >= stored} and the version is unchanged (ZooKeeper's compare-and-set); a lost race reads again.
 */
final class FencedZnode {

    private FencedZnode() {}

    static WriteOutcome write(CuratorFramework client, String path, long fence) {
        byte[] data = Long.toString(fence).getBytes(StandardCharsets.UTF_8);
        try {
            while (true) {
                Stat stat = new Stat();
                byte[] stored;
                try {
                    stored = client.getData().storingStatIn(stat).forPath(path);
                } catch (KeeperException.NoNodeException absent) {
                    try {
                        client.create().creatingParentsIfNeeded().forPath(path, data);
                        return new WriteOutcome.Applied(path, fence);
                    } catch (KeeperException.NodeExistsException raced) {
                        continue;
                    }
                }
                long current = Long.parseLong(new String(stored, StandardCharsets.UTF_8));
                if (fence < current) {
                    return new WriteOutcome.Stale(path, fence, current, FencePolicy.SAME_OR_NEWER);
                }
                try {
                    client.setData().withVersion(stat.getVersion()).forPath(path, data);
                    return new WriteOutcome.Applied(path, fence);
                } catch (KeeperException.BadVersionException raced) {
                    // another writer came first: judge again against what it wrote
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("fenced write of " + path + " failed", e);
        }
    }
}
