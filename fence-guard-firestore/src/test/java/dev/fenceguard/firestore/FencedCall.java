package dev.fenceguard.firestore;

import com.google.cloud.firestore.DocumentReference;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/** The four stand-alone fenced writes, callable through either face, for tests that try every one. */
enum FencedCall {
    UPDATE, SET, CLAIM, DELETE;

    /** What update and set write: {@code status = "by <fence>"}. */
    static Map<String, Object> fields(FenceToken fence) {
        return Map.of("status", "by " + fence.value());
    }

    /** The operation's name in fence-guard's messages, e.g. "fenced update". */
    String label() {
        return "fenced " + name().toLowerCase(Locale.ROOT);
    }

    WriteOutcome on(FencedFirestore fenced, DocumentReference doc, FenceToken fence) {
        return switch (this) {
            case UPDATE -> fenced.update(doc, fence, fields(fence));
            case SET -> fenced.set(doc, fence, fields(fence));
            case CLAIM -> fenced.claim(doc, fence);
            case DELETE -> fenced.delete(doc, fence);
        };
    }

    CompletionStage<WriteOutcome> on(AsyncFencedFirestore fenced, DocumentReference doc, FenceToken fence) {
        return switch (this) {
            case UPDATE -> fenced.update(doc, fence, fields(fence));
            case SET -> fenced.set(doc, fence, fields(fence));
            case CLAIM -> fenced.claim(doc, fence);
            case DELETE -> fenced.delete(doc, fence);
        };
    }
}
