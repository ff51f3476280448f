package dev.fenceguard.firestore.internal;

import com.google.api.core.ApiFuture;
import com.google.api.gax.rpc.ApiException;
import com.google.cloud.firestore.FirestoreException;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.ExecutionException;

/** Waits on Firestore futures and maps gRPC status codes to fence-guard's codes. */
public final class FirestoreErrors {

    private FirestoreErrors() {}

    /** {@code future.get()}, with failures as {@link FenceGuardException} (or the app's own exception). */
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
            throw new FenceGuardException(code(cause), subject, operation + " failed: " + cause, cause);
        }
    }

    /**
     * Waits on a conditional write. Returns false if its precondition failed (the document changed
     * since it was read, or already exists for a create): the caller re-reads and decides again.
     */
    public static boolean awaitConditional(ApiFuture<?> future, String subject, String operation) {
        try {
            future.get();
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, subject, operation + " interrupted", e);
        } catch (ExecutionException e) {
            Status.Code code = status(e.getCause());
            if (code == Status.Code.FAILED_PRECONDITION || code == Status.Code.ALREADY_EXISTS) {
                return false;
            }
            throw new FenceGuardException(code(e.getCause()), subject, operation + " failed: " + e.getCause(), e.getCause());
        }
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
