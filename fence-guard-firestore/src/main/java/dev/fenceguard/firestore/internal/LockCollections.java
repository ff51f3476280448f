package dev.fenceguard.firestore.internal;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import dev.fenceguard.core.internal.Text;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/** The collections that hold lock documents, and the rule that keeps fenced resource writes out of them. */
public final class LockCollections {

    /** The lock backend's default collection. */
    public static final String DEFAULT = "fence_guard_locks";

    private LockCollections() {}

    /**
     * {@code collection} if it is a single Firestore collection id, the only kind a lock backend takes
     * (so lock collections are always top-level).
     *
     * @param setting the setting named in the message
     * @throws IllegalArgumentException if it is empty, contains {@code /}, is {@code .} or {@code ..},
     *     matches {@code __.*__}, is longer than 1,500 UTF-8 bytes, or is not valid Unicode (the SDK
     *     writes {@code '?'} for an unpaired surrogate: two collection ids would name one collection)
     */
    public static String requireCollectionId(String setting, String collection) {
        Objects.requireNonNull(collection, setting);
        Text.requireValidUnicode(setting, collection);
        if (collection.isEmpty() || collection.contains("/") || collection.equals(".") || collection.equals("..")
                || collection.matches("__.*__") || collection.getBytes(StandardCharsets.UTF_8).length > 1500) {
            throw new IllegalArgumentException(setting + " must be a single Firestore collection id (no '/', not '.' or"
                    + " '..', not __x__, at most 1500 bytes), was '" + shown(collection) + "'");
        }
        return collection;
    }

    /**
     * Refuses {@code doc} if its top-level collection is one of {@code lockCollections}: the lock
     * documents themselves and everything beneath them. A collection of the same name nested under
     * another document is not a lock collection (a lock backend takes only top-level collection ids) and
     * is not refused.
     *
     * @throws IllegalArgumentException naming the document and the collection
     */
    public static void requireOutside(DocumentReference doc, List<String> lockCollections) {
        requireOutside("document", doc.getPath(), lockCollections, "(or its idempotency entries), and a fenced write there"
                + " could rewind a lock's fence, take over a lock or forge a recorded outcome");
    }

    /**
     * Refuses {@code collection} (for a purge) if its top-level collection is one of {@code lockCollections},
     * by the rule of {@link #requireOutside(DocumentReference, List)}.
     *
     * @throws IllegalArgumentException naming the collection
     */
    public static void requireOutside(CollectionReference collection, List<String> lockCollections) {
        requireOutside("collection", collection.getPath(), lockCollections, "(or its idempotency entries or flights), which no"
                + " tombstone purge may touch");
    }

    /** The rule of both: {@code path}'s top-level collection must not be a lock collection; {@code why} ends the error. */
    private static void requireOutside(String what, String path, List<String> lockCollections, String why) {
        int slash = path.indexOf('/');
        String top = slash < 0 ? path : path.substring(0, slash);
        if (lockCollections.contains(top)) {
            throw new IllegalArgumentException(what + " '" + shown(path) + "' is in fence-guard's own key space: top-level"
                    + " collection '" + top + "' holds the documents of a FirestoreLockBackend " + why);
        }
    }

    private static String shown(String path) {
        return path.length() > 80 ? path.substring(0, 80) + "..." : path;
    }
}
