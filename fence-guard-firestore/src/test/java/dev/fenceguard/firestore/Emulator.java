package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.testkit.servers.TestFirestore;

/** A Firestore client on the test emulator, in a project of its own. */
final class Emulator {
    private Emulator() {}

    static Firestore newProject(String name) {
        return FirestoreOptions.newBuilder()
                .setProjectId(TestFirestore.newProjectId(name))
                .setEmulatorHost(TestFirestore.server().hostPort())
                .setCredentials(new FirestoreOptions.EmulatorCredentials())
                .build()
                .getService();
    }
}
