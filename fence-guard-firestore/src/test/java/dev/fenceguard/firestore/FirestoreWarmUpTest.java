package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.servers.Ports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** {@code warmUp()} of the Firestore lock backend and fenced writes, on the emulator. */
class FirestoreWarmUpTest {

    private static final Firestore DB = Emulator.newProject("warmup");

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    private static List<String> collections(Firestore db) {
        List<String> out = new ArrayList<>();
        for (CollectionReference c : db.listCollections()) {
            out.add(c.getId());
        }
        return out;
    }

    @Test
    void warmUpIsIdempotentWritesNoDocumentAndLeavesCallsWorking() throws Exception {
        FenceGuardFirestore firestore = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build();
        LockClient locks = LockClient.builder(firestore.lockBackend()).withMetrics(LockMetrics.none()).build();
        locks.warmUp();
        locks.async().warmUp().toCompletableFuture().join();
        firestore.fencedWrites().warmUp();
        firestore.fencedWrites().async().warmUp().toCompletableFuture().join();
        assertThat(collections(DB)).as("collections after two warm-ups of each (a document would create one)").isEmpty();

        try (Lease lease = locks.tryAcquire("orders:1", Duration.ofSeconds(30)).orElseThrow()) {
            assertThat(lease.fence().value()).as("the first fence after warm-ups").isEqualTo(1);
            assertThat(firestore.fencedWrites().set(DB.collection("orders").document("1"), lease.fence(), Map.of("status", "paid")))
                    .isInstanceOf(WriteOutcome.Applied.class);
        }
        assertThat(firestore.lockBackend().documentOf("orders:1").get().get().exists()).isTrue();
        assertThat(DB.collection("fence_guard_locks").document("warm-up").get().get().exists())
                .as("the document warm-ups read").isFalse();
    }

    @Test
    void warmUpWithNoServerFailsWithAMappedError() throws Exception {
        try (Firestore nowhere = FirestoreOptions.newBuilder().setProjectId("warmup-offline").setEmulatorHost("127.0.0.1:" + Ports.refused())
                .setCredentials(new FirestoreOptions.EmulatorCredentials()).build().getService()) {
            FenceGuardFirestore firestore = FenceGuardFirestore.builder(nowhere).withCallTimeout(Duration.ofSeconds(2))
                    .withMetrics(LockMetrics.none()).build();
            LockClient locks = LockClient.builder(firestore.lockBackend()).withCallTimeout(Duration.ofSeconds(2))
                    .withMetrics(LockMetrics.none()).build();
            // gRPC reports a refused connection as UNAVAILABLE; the SDK may retry it until the deadline (TIMEOUT).
            assertThatThrownBy(locks::warmUp).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                assertThat(e.code()).isIn(ErrorCode.UNAVAILABLE, ErrorCode.TIMEOUT);
                assertThat(e.key()).as("a warm-up concerns no key").isEmpty();
            });
            assertThatThrownBy(() -> firestore.fencedWrites().warmUp()).isInstanceOfSatisfying(FenceGuardException.class,
                    e -> assertThat(e.code()).isIn(ErrorCode.UNAVAILABLE, ErrorCode.TIMEOUT));
        }
    }
}
