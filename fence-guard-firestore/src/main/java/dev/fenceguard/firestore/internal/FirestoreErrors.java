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
