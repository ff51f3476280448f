package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Bad settings fail in the builder, naming the setting and the value, before any I/O: the Curator client
 * here is never started and points at a port nothing listens on, so a builder that talked to ZooKeeper
 * would hang or fail differently.
 */
class FenceGuardZooKeeperTest {

    private static final CuratorFramework UNSTARTED = CuratorFrameworkFactory.newClient("127.0.0.1:1", new RetryOneTime(1));

    @ParameterizedTest
    @ValueSource(strings = {"", "/", "locks", "/locks/", "//locks", "/a//b", "/a/./b", "/a/../b", "/zookeeper", "/zookeeper/locks",
            "/with space", "/ünicode", "/a/b\u0000"})
    void aRootPathThatIsNotAPlainAbsolutePathIsRefused(String root) {
        assertThatThrownBy(() -> FenceGuardZooKeeper.builder(UNSTARTED).withRootPath(root))
                .as("withRootPath('%s')", root)
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rootPath").hasMessageContaining("'" + root + "'");
    }

    @Test
    void nullsAndAnEmptyAclAreRefused() {
        assertThatThrownBy(() -> FenceGuardZooKeeper.builder(null)).isInstanceOf(NullPointerException.class).hasMessage("client");
        assertThatThrownBy(() -> FenceGuardZooKeeper.builder(UNSTARTED).withRootPath(null))
                .isInstanceOf(NullPointerException.class).hasMessage("rootPath");
        assertThatThrownBy(() -> FenceGuardZooKeeper.builder(UNSTARTED).withAcl(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> FenceGuardZooKeeper.builder(UNSTARTED).withAcl(List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("acl must have at least one entry");
        List<ACL> withNull = new java.util.ArrayList<>();
        withNull.add(null);
        assertThatThrownBy(() -> FenceGuardZooKeeper.builder(UNSTARTED).withAcl(withNull)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void aPlainRootPathIsTakenAndBuildingDoesNoIo() {
        ZooKeeperLockBackend backend = FenceGuardZooKeeper.builder(UNSTARTED).withRootPath("/apps/orders-1/fence_guard:locks.v2").build()
                .lockBackend();
        assertThat(backend.rootPath()).isEqualTo("/apps/orders-1/fence_guard:locks.v2");
        assertThat(backend.keyNodeOf("orders:42")).isEqualTo("/apps/orders-1/fence_guard:locks.v2/korders%3A42");
        assertThat(backend.name()).isEqualTo("zookeeper");
    }

    @Test
    void theKeyNodesOfANamespacedClientCarryTheNamespace() {
        CuratorFramework namespaced = CuratorFrameworkFactory.builder().connectString("127.0.0.1:1").namespace("tenant-a")
                .retryPolicy(new RetryOneTime(1)).build();
        assertThat(FenceGuardZooKeeper.builder(namespaced).build().lockBackend().keyNodeOf("k"))
                .isEqualTo("/tenant-a/fence-guard/locks/kk");
    }
}
