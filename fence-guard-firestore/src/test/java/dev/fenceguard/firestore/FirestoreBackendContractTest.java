package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;

/** The backend contract on the Firestore emulator (client clock, 50 ms skew allowance). */
class FirestoreBackendContractTest extends LockBackendContract {

    private static final Firestore DB = Emulator.newProject("contract");

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    @Override
    protected LockBackend backend() {
        return FirestoreLockBackend.builder(DB).withClockSkewAllowance(Duration.ofMillis(50)).build();
    }

    @Override
    protected Duration shortTtl() {
        return Duration.ofMillis(600);
    }
}
