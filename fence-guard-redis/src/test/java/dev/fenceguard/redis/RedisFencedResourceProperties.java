package dev.fenceguard.redis;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template over the blocking face of FencedRedis. */
class RedisFencedResourceProperties extends RedisFencedResources {

    private static final Fixture FIXTURE = Fixture.open("resprops");

    RedisFencedResourceProperties() {
        super(FIXTURE);
    }

    @AfterContainer
    static void cleanUp() {
        FIXTURE.close();
    }

    @Override
    WriteOutcome faceSet(FencedRedis writes, String key, String value, FenceToken fence) {
        return writes.set(key, fence, value);
    }

    @Override
    WriteOutcome faceDelete(FencedRedis writes, String key, FenceToken fence) {
        return writes.delete(key, fence);
    }
}
