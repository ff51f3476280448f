package dev.fenceguard.redis;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendContract;
import dev.fenceguard.testkit.servers.TestRedis;
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
        private RedisLockBackend backend;

        abstract RedisLockBackend open();

        @Override
        protected LockBackend backend() {
            if (backend == null) {
                backend = open();
            }
            return backend;
        }

        @Override
        protected LockBackend restartedBackend() {
            return open();
        }

        @AfterEach
        void close() {
            if (backend != null) {
                backend.close();
            }
        }

        @Override
        protected int concurrencyAttemptsPerThread() {
            return 150;
        }
    }

    @Nested
    class StandaloneClockFloored extends OnRedis {
        @Override
        RedisLockBackend open() {
            return RedisLockBackend.builder(RedisSupport.shared()).withKeyPrefix(PREFIX).build();
        }
    }

    @Nested
    class StandaloneDense extends OnRedis {
        @Override
        RedisLockBackend open() {
            return RedisLockBackend.builder(RedisSupport.shared()).withKeyPrefix(PREFIX + "dense:")
                    .withFenceStrategy(FenceStrategy.DENSE).build();
        }
    }

    @Nested
    class Cluster extends OnRedis {
        @Override
        RedisLockBackend open() {
            return RedisLockBackend.builder(RedisSupport.cluster()).withKeyPrefix(PREFIX).build();
        }
    }
}
