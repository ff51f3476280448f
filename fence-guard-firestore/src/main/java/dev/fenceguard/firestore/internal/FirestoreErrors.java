package dev.fenceguard.firestore.internal;

import com.google.api.core.ApiFuture;
import com.google.api.gax.rpc.ApiException;
import com.google.cloud.firestore.FirestoreException;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.internal.Redacted;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/**
 * The module's one error mapper: gRPC status codes to fence-guard's codes, for the lock backend and the
 * fenced writes alike; and the two places where a thread waits: the blocking face of the fenced writes
 * ({@link #join}), and a read inside the caller's own transaction ({@link #await}), which the SDK runs on
 * its own executor and expects to block.
 */
public final class FirestoreErrors {

    private FirestoreErrors() {}

    /**
     * {@code future.get()}, with failures as {@link FenceGuardException} (or the app's own exception).
     * Only for reads inside the caller's transaction function; everything else is asynchronous.
     */
    public static <T> T await(ApiFuture<T> future, String subject, String operation) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, subject, operation + " interrupted", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof FenceGuardException f) {
                throw f; // thrown by our own transaction function, e.g. FENCE_EXHAUSTED
            }
            if (cause instanceof IllegalArgumentException i) {
                throw i;
            }
            throw failure(cause, subject, operation);
        }
    }

    /**
     * Waits for a stage that bounds itself (every stage of this module ends by its deadline), for the
     * blocking faces ({@link Stages#awaitUninterruptibly}): its value, or its failure unwrapped, a checked
     * one mapped as the SDK's are. An interrupt does not end the wait: the write was sent, and its answer
     * (or the call timeout) tells what became of it; the thread's interrupt status is set again on return.
     *
     * @throws FenceGuardException as the stage failed
     */
    public static <T> T join(CompletionStage<T> stage, String subject, String operation) {
        return Stages.awaitUninterruptibly(stage, cause -> failure(cause, subject, operation));
    }

    /**
     * Whether {@code t} is a conditional write's precondition failing: the document changed since it was
     * read, already exists for a create, or (should Firestore say so) no longer exists for an update. A
     * lost race, not an error: the operation reads again. {@code ABORTED} counts too: Firestore (and its
     * emulator, under contention on one document) answers it for a write that conflicted with another
     * and was not applied, and says to retry; a waiter that took it for an outage gave up its wait.
     */
    static boolean isLostRace(Throwable t) {
        Status.Code code = status(t);
        return code == Status.Code.FAILED_PRECONDITION || code == Status.Code.ALREADY_EXISTS || code == Status.Code.NOT_FOUND
                || code == Status.Code.ABORTED;
    }

    /**
     * A {@link FenceGuardException} for a failed call: the gRPC status code, the exception's class, and
     * as cause a {@link Redacted} copy (class name, the same facts, stack trace); never the status
     * description or the SDK's message, of any code: a description is the server's (or a proxy's) text
     * and can quote a document, even for {@code PERMISSION_DENIED}.
     */
    public static FenceGuardException failure(Throwable cause, String subject, String operation) {
        Status.Code status = status(cause);
        String text = status == null ? "no gRPC status" : "gRPC " + status;
        return new FenceGuardException(code(cause), subject, operation + " failed: " + text + " ("
                + (cause == null ? "no cause" : cause.getClass().getName()) + ")", Redacted.of(cause, text));
    }

    private static Status.Code status(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof FirestoreException f && f.getStatus() != null) {
                return f.getStatus().getCode();
            }
            if (c instanceof StatusRuntimeException s) {
                return s.getStatus().getCode();
            }
            if (c instanceof ApiException a) {
                return Status.Code.valueOf(a.getStatusCode().getCode().name());
            }
        }
        return null;
    }

    static ErrorCode code(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            Status.Code code = null;
            if (c instanceof FirestoreException f && f.getStatus() != null) {
                code = f.getStatus().getCode();
            } else if (c instanceof StatusRuntimeException s) {
                code = s.getStatus().getCode();
            } else if (c instanceof ApiException a) {
                code = Status.Code.valueOf(a.getStatusCode().getCode().name());
            }
            if (code != null) {
                return switch (code) {
                    case DEADLINE_EXCEEDED -> ErrorCode.TIMEOUT;
                    case UNAVAILABLE, ABORTED, RESOURCE_EXHAUSTED, CANCELLED -> ErrorCode.UNAVAILABLE;
                    case PERMISSION_DENIED, UNAUTHENTICATED -> ErrorCode.AUTH;
                    case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> ErrorCode.INVALID_ARGUMENT;
                    default -> ErrorCode.INTERNAL;
                };
            }
        }
        return ErrorCode.INTERNAL;
    }
}
