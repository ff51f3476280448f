package dev.fenceguard.shedlock;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.testkit.servers.TestFirestore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's own provider suite, unmodified, on the Firestore emulator, in a project of its own. */
class FirestoreShedLockProviderTest extends ShedLockSuite {

    private static Firestore db;
    private static LockClient locks;

    @BeforeAll
    static void setUp() {
        db = FirestoreOptions.newBuilder()
                .setProjectId(TestFirestore.newProjectId("shedlock"))
                .setEmulatorHost(TestFirestore.server().hostPort())
                .setCredentials(new FirestoreOptions.EmulatorCredentials())
                .build()
                .getService();
        locks = clientOf(FenceGuardFirestore.builder(db).build().lockBackend());
    }

    @AfterAll
    static void tearDown() throws Exception {
        db.close();
    }

    @Override
    LockClient locks() {
        return locks;
    }
}
