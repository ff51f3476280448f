package dev.fenceguard.redis;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The fenced-resource template over the asynchronous face of FencedRedis: the same histories must give
 * the same outcomes and states as through the blocking face. The template's writers run on threads of
 * their own, so waiting for each stage here blocks no event loop.
 */
class RedisAsyncFencedResourceProperties extends RedisFencedResources {

    private static final Fixture FIXTURE = Fixture.open("asyncresprops");

    RedisAsyncFencedResourceProperties() {
        super(FIXTURE);
    }

    @AfterContainer
    static void cleanUp() {
        FIXTURE.close();
    }

    @Override
    WriteOutcome faceSet(FencedRedis writes, String key, String value, FenceToken fence) {
        return writes.async().set(key, fence, value).toCompletableFuture().join();
    }

    @Override
    WriteOutcome faceDelete(FencedRedis writes, String key, FenceToken fence) {
        return writes.async().delete(key, fence).toCompletableFuture().join();
    }
}
