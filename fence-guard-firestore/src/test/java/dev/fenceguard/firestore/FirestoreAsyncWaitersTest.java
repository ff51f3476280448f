package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.AsyncWaitersContract;

/**
 * {@link AsyncWaitersContract} on the Firestore emulator. Fewer callers than on Redis: every attempt is
 * a read and a conditional write on an emulator that serves a few thousand a second on this machine kind.
 */
class FirestoreAsyncWaitersTest extends AsyncWaitersContract {

    private static final Firestore DB = Emulator.newProject("waiters");
    private static final FenceGuardFirestore FIRESTORE = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build();

    @Override
    protected LockBackend backend() {
        return FIRESTORE.lockBackend();
    }

    /**
     * The Firestore SDK completes its RPCs on gRPC's default executor, a cached pool that starts a thread
     * whenever a completion finds none idle: 200 callers polling every few milliseconds grew it by about
     * 86 threads (grpc-default-executor-N; fence-guard's own: one timer, one deadline thread). It grows
     * with bursts of completions, not with callers: 2,000 callers polling more slowly added 3 more. A
     * service that needs a hard bound gives the SDK's channel a bounded executor of its own.
     */
    @Override
    protected int platformThreadAllowance() {
        return 120;
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
