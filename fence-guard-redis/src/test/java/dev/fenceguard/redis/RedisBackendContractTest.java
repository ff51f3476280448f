package dev.fenceguard.redis;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendContract;
import dev.fenceguard.testkit.servers.TestRedis;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;

/** The backend contract on Redis: standalone with both strategies, and a 3-master Cluster. */
class RedisBackendContractTest {

    private static final String PREFIX = TestRedis.keyPrefix("contract");

    @AfterAll
    static void cleanUp() {
        RedisSupport.deleteKeys(PREFIX);
    }

    abstract static class OnRedis extends LockBackendContract {
        private FenceGuardRedis redis;
        private final List<FenceGuardRedis> restarted = new ArrayList<>();

        abstract FenceGuardRedis open();

        @Override
        protected LockBackend backend() {
            if (redis == null) {
                redis = open();
            }
            return redis.lockBackend();
        }

        @Override
        protected LockBackend restartedBackend() {
            FenceGuardRedis again = open();
            restarted.add(again);
            return again.lockBackend();
        }

        @AfterEach
        void close() {
            if (redis != null) {
                redis.close();
            }
            restarted.forEach(FenceGuardRedis::close);
        }

        @Override
        protected int concurrencyAttemptsPerThread() {
            return 150;
        }
    }

    @Nested
    class StandaloneClockFloored extends OnRedis {
        @Override
        FenceGuardRedis open() {
            return FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(PREFIX).build();
        }
    }

    @Nested
    class StandaloneDense extends OnRedis {
        @Override
        FenceGuardRedis open() {
            return FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(PREFIX + "dense:")
                    .withFenceStrategy(FenceStrategy.DENSE).build();
        }
    }

    @Nested
    class Cluster extends OnRedis {
        @Override
        FenceGuardRedis open() {
            return FenceGuardRedis.builder(RedisSupport.cluster()).withKeyPrefix(PREFIX).build();
        }
    }
}
