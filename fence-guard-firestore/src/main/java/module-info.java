/**
 * fence-guard on Google Cloud Firestore: the lock backend and transactional fenced writes. The
 * Firestore SDK's jars have no module names of their own; the names below are derived from the jar
 * file names (docs/modules.md).
 *
 * @since 0.1
 */
module dev.fenceguard.firestore {
    requires transitive dev.fenceguard.core;
    requires transitive google.cloud.firestore;
    requires transitive google.cloud.core;
    requires transitive com.google.api.apicommon;
    requires gax;
    requires io.grpc;

    exports dev.fenceguard.firestore;
}
