package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.testkit.servers.TestFirestore;

/** A Firestore client on the test emulator, in a project of its own. */
final class Emulator {
    private Emulator() {}

    static Firestore newProject(String name) {
        return clientOf(TestFirestore.newProjectId(name));
    }

    /** Another client of a project (one made by {@link TestFirestore#newProjectId}). */
    static Firestore clientOf(String project) {
        return FirestoreOptions.newBuilder()
                .setProjectId(project)
                .setEmulatorHost(TestFirestore.server().hostPort())
                .setCredentials(new FirestoreOptions.EmulatorCredentials())
                .build()
                .getService();
    }
}
