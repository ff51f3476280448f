package dev.fenceguard.firestore;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import java.util.Map;

/**
 * The fenced-resource template through {@link AsyncFencedFirestore}: the same histories, outcomes and
 * states as {@link FirestoreFencedResourceProperties}, each write's stage waited for by the test rather
 * than by the blocking face.
 */
class FirestoreAsyncFencedResourceProperties extends FirestoreFencedResourceProperties {

    private static final AsyncFencedFirestore ASYNC = FENCED.async();

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) throws Exception {
        return ASYNC.update(doc(id), fence, Map.of("value", value)).toCompletableFuture().get();
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) throws Exception {
        return ASYNC.set(doc(id), fence, Map.of("value", value)).toCompletableFuture().get();
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) throws Exception {
        return ASYNC.delete(doc(id), fence).toCompletableFuture().get();
    }
}
