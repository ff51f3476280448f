package dev.fenceguard.firestore;

import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.AsyncWaitersContract;
import dev.fenceguard.testkit.servers.TestFirestore;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;

/**
 * {@link AsyncWaitersContract} on the Firestore emulator. Fewer callers than on Redis: every attempt is
 * a read and a conditional write on an emulator that serves a few thousand a second on this machine kind.
 *
 * <p>The SDK's channel gets a bounded executor of its own for its RPC completions, as docs/firestore.md
 * advises a service that needs a hard bound. With gRPC's default executor, a cached pool that starts a
 * thread whenever a completion finds none idle, 200 callers polling every few milliseconds grew it by
 * about 86 threads on a quiet machine and by 120 on a loaded CI run (which then failed an allowance of
 * 120): its size follows the machine's load, not fence-guard.
 */
class FirestoreAsyncWaitersTest extends AsyncWaitersContract {

    private static final int COMPLETION_THREADS = 4;
    private static final ExecutorService COMPLETIONS = Executors.newFixedThreadPool(COMPLETION_THREADS,
            Thread.ofPlatform().name("waiters-grpc-completion-", 0).daemon().factory());
    private static final ExecutorService OFFLOAD = Executors.newFixedThreadPool(2,
            Thread.ofPlatform().name("waiters-grpc-offload-", 0).daemon().factory());
    private static final Firestore DB = FirestoreOptions.newBuilder()
            .setProjectId(TestFirestore.newProjectId("waiters"))
            .setCredentials(new FirestoreOptions.EmulatorCredentials())
            .setChannelProvider(InstantiatingGrpcChannelProvider.newBuilder()
                    .setEndpoint(TestFirestore.server().hostPort())
                    .setChannelConfigurator(b -> b.usePlaintext().executor(COMPLETIONS).offloadExecutor(OFFLOAD))
                    .build())
            .build().getService();
    private static final FenceGuardFirestore FIRESTORE = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build();

    @AfterAll
    static void closeSdk() throws Exception {
        DB.close();
        COMPLETIONS.shutdown();
        OFFLOAD.shutdown();
    }

    @Override
    protected LockBackend backend() {
        return FIRESTORE.lockBackend();
    }

    /** The completion and offload pools, fence-guard's own two (the lock client's timer, the deadline thread), and as many again for the SDK and gRPC. */
    @Override
    protected int platformThreadAllowance() {
        return COMPLETION_THREADS + 2 + 2 + 6;
    }

    @Override
    protected int waitersThatGiveUp() {
        return 2_000;
    }

    @Override
    protected int waitersThatGetIt() {
        return 200;
    }
}
