package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;

/** The backend contract on the Firestore emulator (expiry by the server's read time). */
class FirestoreBackendContractTest extends LockBackendContract {

    private static final Firestore DB = Emulator.newProject("contract");

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    @Override
    protected LockBackend backend() {
        return FenceGuardFirestore.builder(DB).build().lockBackend();
    }

    @Override
    protected Duration shortTtl() {
        return Duration.ofMillis(600);
    }
}
