package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.Ports;
import dev.fenceguard.testkit.servers.RedisServers;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Driver failures come out as FenceGuardException with core's codes, and leave no partial write. */
class RedisErrorsTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    @Test
    void connectionRefusedIsUnavailable() {
        RedisClient client = RedisClient.create(RedisURI.create("redis://127.0.0.1:" + Ports.refused()));
        try {
            assertThatThrownBy(() -> FenceGuardRedis.builder(client).build())
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
        } finally {
            client.shutdown();
        }
    }

    @Test
    void aServerThatEchoesTheArgumentsDoesNotPutTheLockIdIntoTheException() {
        // With scripting renamed away, Redis answers "unknown command 'evalsha', with args beginning with: ..."
        // and the arguments include the lock id.
        try (RedisServers.Server server = RedisServers.start("--rename-command", "EVALSHA", "evalsha-renamed",
                "--rename-command", "EVAL", "eval-renamed")) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
                LockId id = LockId.random();
                Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                        () -> BlockingBackend.of(redis.lockBackend()).tryAcquire(LockKey.of("orders:echo"), id, TTL));
                assertThat(thrown).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.getMessage()).contains("acquire failed: ERR (error text withheld").contains("orders:echo");
                    assertThat(e.getCause()).hasMessageStartingWith("io.lettuce.core.RedisCommandExecutionException: ");
                    assertThat(e.getCause().getStackTrace()).isNotEmpty();
                });
                java.io.StringWriter printed = new java.io.StringWriter();
                thrown.printStackTrace(new java.io.PrintWriter(printed));
                assertThat(printed.toString()).doesNotContain(id.value());
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void aScriptsErrorTextStaysOutAndOnlyAKnownRedisErrorCodeIsKept() {
        // A user's fenced script that fails quoting stored data (read from a key, so no argument to spot),
        // once with Redis's own ERR code and once with a code of its own making.
        String prefix = TestRedis.keyPrefix("errtext");
        String marker = "marker-" + LockId.random().value().substring(0, 8);
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            FencedRedis writes = redis.fencedWrites();
            String resource = prefix + "data:{acct}:1";
            String secret = prefix + "data:{acct}:secret";
            admin.sync().set(secret, marker);
            dev.fenceguard.core.FenceToken fence = dev.fenceguard.core.FenceToken.of(5);
            for (String body : java.util.List.of("return redis.error_reply('ERR no: ' .. redis.call('GET', KEYS[2]))",
                    "return redis.error_reply(string.upper(redis.call('GET', KEYS[2])):gsub('[^A-Z]', '') .. ' no')")) {
                Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                        () -> writes.eval(body, java.util.List.of(resource, secret), fence, java.util.List.of()));
                assertThat(thrown).isInstanceOf(FenceGuardException.class);
                String upper = marker.toUpperCase(java.util.Locale.ROOT).replaceAll("[^A-Z]", "");
                assertThat(dev.fenceguard.testkit.Printed.everything(thrown)).doesNotContain(marker).doesNotContain(upper).doesNotContain(" no");
                assertThat(thrown.getMessage()).contains("fenced script failed: ")
                        .contains(body.contains("'ERR") ? "ERR (error text withheld" : "(error code and text withheld");
            }
            // A wrong type keeps its code: it is Redis's own, and says what to look at.
            admin.sync().set(prefix + "text", "x");
            assertThatThrownBy(() -> writes.hset(prefix + "text", fence, java.util.Map.of("a", "b"))).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                assertThat(e.getMessage()).contains("WRONGTYPE (error text withheld");
            });
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void anArgumentQuotedInAnErrorIsWithheldWherePresent() {
        String id = LockId.random().value();
        assertThat(dev.fenceguard.redis.internal.RedisErrors.safeText(
                "ERR Error running script: bad lock " + id + " script: abc, on @user_script:1.", id, "30000"))
                .isEqualTo("ERR Error running script: bad lock <argument withheld> script: abc, on @user_script:1.");
    }

    @Test
    void aResetOrClosedSocketIsUnavailableWhateverItsWording() {
        // Seen in the fault storms: a connection cut by the proxy surfaced as "Connection reset" (capital C).
        assertThat(dev.fenceguard.redis.internal.RedisErrors.map(new io.lettuce.core.RedisException(
                new java.net.SocketException("Connection reset")), "k", "acquire").code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(dev.fenceguard.redis.internal.RedisErrors.map(new io.lettuce.core.RedisException(
                "Connection closed by peer"), "k", "acquire").code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(dev.fenceguard.redis.internal.RedisErrors.map(new io.lettuce.core.RedisException(
                "something odd"), "k", "acquire").code()).isEqualTo(ErrorCode.INTERNAL);
    }

    @Test
    void missingPasswordIsAuth() {
        try (RedisServers.Server server = RedisServers.start("--requirepass", "s3cret")) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try {
                assertThatThrownBy(() -> {
                    try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
                        BlockingBackend.of(redis.lockBackend()).tryAcquire(LockKey.of("k"), LockId.random(), TTL);
                    }
                }).isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.AUTH));
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void lettucesOwnCommandTimeoutIsTimeoutToo() throws Exception {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisURI uri = RedisURI.create(server.uri());
            uri.setTimeout(Duration.ofMillis(300));
            RedisClient client = RedisClient.create(uri);
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build();
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                admin.sync().clientPause(2_000);
                assertThatThrownBy(() -> BlockingBackend.of(redis.lockBackend()).tryAcquire(LockKey.of("k"), LockId.random(), TTL))
                        .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                            assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
                            assertThat(e.key()).contains("k");
                            assertThat(e.getCause()).as("Lettuce's timeout, not the call's 30 s")
                                    .hasMessageStartingWith("io.lettuce.core.RedisCommandTimeoutException");
                        });
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void aWrongTypeAtAnInternalKeyIsInvalidArgumentAndTakesNoLock() {
        String prefix = TestRedis.keyPrefix("wrongtype");
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            RedisLockBackend backend = redis.lockBackend();
            admin.sync().rpush(backend.fenceKeyOf("k"), "not a counter");
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(LockKey.of("k"), LockId.random(), TTL))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
            assertThat(admin.sync().exists(backend.lockKeyOf("k"))).as("no lock written").isZero();
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void scriptsAreReloadedAfterTheServerForgetsThem() {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build();
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
                LockId id = LockId.random();
                locks.tryAcquire(LockKey.of("k"), id, TTL).orElseThrow();
                // Every cached script is gone: each EVALSHA below says NOSCRIPT and the asynchronous path re-sends EVAL.
                assertThat(admin.sync().scriptFlush()).isEqualTo("OK");
                assertThat(locks.lookup(LockKey.of("k"))).isPresent();
                assertThat(admin.sync().scriptFlush()).isEqualTo("OK");
                assertThat(locks.extend(LockKey.of("k"), id, TTL)).isPresent();
                assertThat(admin.sync().scriptFlush()).isEqualTo("OK");
                assertThat(locks.release(LockKey.of("k"), id)).isTrue();
                assertThat(admin.sync().scriptFlush()).isEqualTo("OK");
                assertThat(locks.tryAcquire(LockKey.of("k"), LockId.random(), TTL)).isPresent();
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void anExhaustedKeyFailsClearlyAndTakesNoLock() {
        String prefix = TestRedis.keyPrefix("exhausted");
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix)
                .withFenceStrategy(dev.fenceguard.core.FenceStrategy.DENSE).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            RedisLockBackend backend = redis.lockBackend();
            admin.sync().set(backend.fenceKeyOf("old"), Long.toString(dev.fenceguard.core.FenceToken.MAX_VALUE));
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(LockKey.of("old"), LockId.random(), TTL))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED);
                        assertThat(e.getMessage()).contains("900000000000000").contains("no lock was taken");
                    });
            assertThat(admin.sync().exists(backend.lockKeyOf("old"))).isZero();
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void replicaAcknowledgementFailsClearlyWithoutReplicasAndReleases() {
        String prefix = TestRedis.keyPrefix("wait");
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix)
                .withReplicaAcknowledgement(1, Duration.ofMillis(100)).build()) {
            RedisLockBackend backend = redis.lockBackend();
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(LockKey.of("k"), LockId.random(), TTL))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                        assertThat(e.getMessage()).contains("only 0 of 1 replicas");
                    });
            assertThat(BlockingBackend.of(backend).lookup(LockKey.of("k"))).as("released").isEmpty();
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
        assertThatThrownBy(() -> FenceGuardRedis.builder(RedisSupport.cluster()).withReplicaAcknowledgement(1, Duration.ofMillis(10)).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("Cluster");
    }
}
