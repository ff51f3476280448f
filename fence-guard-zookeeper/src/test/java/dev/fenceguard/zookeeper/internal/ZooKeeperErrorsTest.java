package dev.fenceguard.zookeeper.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;

/** ZooKeeper's result codes map to fence-guard's codes, and the path a KeeperException names is withheld. */
class ZooKeeperErrorsTest {

    @Test
    void resultCodesMapToTheirFenceGuardCodes() {
        assertThat(ZooKeeperErrors.code(KeeperException.Code.CONNECTIONLOSS)).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(ZooKeeperErrors.code(KeeperException.Code.SESSIONEXPIRED)).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(ZooKeeperErrors.code(KeeperException.Code.OPERATIONTIMEOUT)).isEqualTo(ErrorCode.TIMEOUT);
        assertThat(ZooKeeperErrors.code(KeeperException.Code.NOAUTH)).isEqualTo(ErrorCode.AUTH);
        assertThat(ZooKeeperErrors.code(KeeperException.Code.AUTHFAILED)).isEqualTo(ErrorCode.AUTH);
        assertThat(ZooKeeperErrors.code(KeeperException.Code.MARSHALLINGERROR)).isEqualTo(ErrorCode.INTERNAL);
    }

    @Test
    void aKeeperExceptionKeepsItsCodeAndNotItsPath() {
        FenceGuardException e = ZooKeeperErrors.map(KeeperException.create(KeeperException.Code.NOAUTH, "/secret/path"), "orders:42",
                "acquire");
        assertThat(e.code()).isEqualTo(ErrorCode.AUTH);
        assertThat(e.getMessage()).contains("orders:42").contains("acquire failed: ZooKeeper answered NOAUTH").doesNotContain("/secret/path");
        assertThat(e.getCause().getMessage()).doesNotContain("/secret/path");
        FenceGuardException rc = ZooKeeperErrors.of(KeeperException.Code.CONNECTIONLOSS.intValue(), "k", "release");
        assertThat(rc.code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(rc.getMessage()).contains("release failed: ZooKeeper answered CONNECTIONLOSS");
    }
}
