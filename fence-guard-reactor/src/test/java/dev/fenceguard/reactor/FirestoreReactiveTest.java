package dev.fenceguard.reactor;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.firestore.FirestoreLockBackend;
import dev.fenceguard.testkit.servers.TestFirestore;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;

/** The Mono face on the Firestore emulator, in a project of its own (gRPC completes the calls). */
class FirestoreReactiveTest extends ReactiveLockContract {

    private static final Firestore DB = FirestoreOptions.newBuilder()
            .setProjectId(TestFirestore.newProjectId("reactor"))
            .setEmulatorHost(TestFirestore.server().hostPort())
            .setCredentials(new FirestoreOptions.EmulatorCredentials())
            .build()
            .getService();
    private static final FirestoreLockBackend BACKEND = FenceGuardFirestore.builder(DB).build().lockBackend();

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    @Override
    LockBackend backend() {
        return BACKEND;
    }

    @Override
    Duration renewedTtl() {
        return Duration.ofSeconds(2); // a renewal is a transaction: two or three emulator round trips
    }

    @Override
    int concurrentRounds() {
        return 10; // each call is two or three emulator round trips: the callers meet within a few rounds
    }
}
