package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import java.io.IOException;
import java.net.ServerSocket;

/** A Firestore client of a server that is not there: any RPC it sent would fail, so a call that throws at once did no I/O. */
final class Nowhere {
    private Nowhere() {}

    static Firestore client() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // free now, and closed: nothing listens there
        }
        return FirestoreOptions.newBuilder()
                .setProjectId("nowhere")
                .setEmulatorHost("127.0.0.1:" + port)
                .setCredentials(new FirestoreOptions.EmulatorCredentials())
                .build()
                .getService();
    }
}
