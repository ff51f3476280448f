package dev.fenceguard.zookeeper;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.zookeeper.internal.ZooKeeperErrors;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A resource guarded by fences on ZooKeeper itself, for the tests: a znode whose data is the last fence
 * written and a value ({@code <fence>:<value>}). A write with fence {@code f} reads the node and its
 * version, and sets it only if {@code f >= stored} and the version is unchanged (ZooKeeper's
 * compare-and-set); a lost race reads again. Values are absolute, so a write repeated after a lost answer
 * (Curator retries one) writes the same data again. Failures are mapped as fence-guard maps ZooKeeper's
 * (a user's repository maps its own), so a storm counts them.
 */
final class FencedZnode {

    private FencedZnode() {}

    /** Records {@code fence}, keeping the value (0 for a node it creates). */
    static WriteOutcome write(CuratorFramework client, String path, long fence) {
        return write(client, path, fence, OptionalLong.empty());
    }

    /** Sets the value to {@code value} with {@code fence}. */
    static WriteOutcome write(CuratorFramework client, String path, long fence, long value) {
        return write(client, path, fence, OptionalLong.of(value));
    }

    /** The value (0 if the node does not exist). */
    static long value(CuratorFramework client, String path) {
        try {
            return parse(client.getData().forPath(path))[1];
        } catch (KeeperException.NoNodeException absent) {
            return 0;
        } catch (Exception e) {
            throw ZooKeeperErrors.map(e, path, "read");
        }
    }

    private static WriteOutcome write(CuratorFramework client, String path, long fence, OptionalLong value) {
        try {
            while (true) {
                Stat stat = new Stat();
                long[] stored;
                try {
                    stored = parse(client.getData().storingStatIn(stat).forPath(path));
                } catch (KeeperException.NoNodeException absent) {
                    try {
                        client.create().creatingParentsIfNeeded().forPath(path, data(fence, value.orElse(0)));
                        return new WriteOutcome.Applied(path, fence);
                    } catch (KeeperException.NodeExistsException raced) {
                        continue;
                    }
                }
                if (fence < stored[0]) {
                    return new WriteOutcome.Stale(path, fence, stored[0], FencePolicy.SAME_OR_NEWER);
                }
                try {
                    client.setData().withVersion(stat.getVersion()).forPath(path, data(fence, value.orElse(stored[1])));
                    return new WriteOutcome.Applied(path, fence);
                } catch (KeeperException.BadVersionException raced) {
                    // another writer came first: judge again against what it wrote
                }
            }
        } catch (Exception e) {
            throw ZooKeeperErrors.map(e, path, "fenced write");
        }
    }

    private static byte[] data(long fence, long value) {
        return (fence + ":" + value).getBytes(StandardCharsets.UTF_8);
    }

    /** {fence, value} */
    private static long[] parse(byte[] data) {
        String text = new String(data, StandardCharsets.UTF_8);
        int colon = text.indexOf(':');
        return new long[] {Long.parseLong(text.substring(0, colon)), Long.parseLong(text.substring(colon + 1))};
    }
}
