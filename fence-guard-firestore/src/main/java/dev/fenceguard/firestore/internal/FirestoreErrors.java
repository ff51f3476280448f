package dev.fenceguard.firestore.internal;

import com.google.api.core.ApiFuture;
import com.google.api.gax.rpc.ApiException;
import com.google.cloud.firestore.FirestoreException;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Redacted;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ExecutionException;

/**
 * Waits on Firestore futures (for the fenced writes; the lock backend never waits, see {@link BoundedCall}) and
 * maps gRPC status codes to fence-guard's codes.
 */
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
            throw failure(cause, subject, operation);
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
            throw failure(e.getCause(), subject, operation);
        }
    }

    /**
     * Whether {@code t} is a conditional write's precondition failing (the document changed since it
     * was read, or already exists for a create): a lost race, not an error.
     */
    static boolean isLostRace(Throwable t) {
        Status.Code code = status(t);
        return code == Status.Code.FAILED_PRECONDITION || code == Status.Code.ALREADY_EXISTS;
    }

    /**
     * Status codes whose descriptions are about the service (availability, quota, credentials), not the
     * data; other descriptions (INVALID_ARGUMENT, FAILED_PRECONDITION, INTERNAL, UNKNOWN, ...) can
     * quote a document and are left out.
     */
    private static final Set<Status.Code> DESCRIPTION_SAFE = EnumSet.of(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED,
            Status.Code.CANCELLED, Status.Code.RESOURCE_EXHAUSTED, Status.Code.ABORTED, Status.Code.PERMISSION_DENIED,
            Status.Code.UNAUTHENTICATED);

    /**
     * A {@link FenceGuardException} for a failed call: the gRPC status code, the exception's class, the
     * status description only where it is safe, and as cause a {@link Redacted} copy (class name, the
     * same facts, stack trace); never the SDK's raw message, which may quote document contents.
     */
    static FenceGuardException failure(Throwable cause, String subject, String operation) {
        Status.Code status = status(cause);
        StringBuilder facts = new StringBuilder();
        if (status == null) {
            facts.append("no gRPC status");
        } else {
            facts.append("gRPC ").append(status);
            String description = description(cause);
            if (DESCRIPTION_SAFE.contains(status) && description != null && !description.isBlank()) {
                int nl = description.indexOf('\n');
                facts.append(": ").append(nl < 0 ? description : description.substring(0, nl));
            }
        }
        String text = facts.toString();
        return new FenceGuardException(code(cause), subject, operation + " failed: " + text + " ("
                + (cause == null ? "no cause" : cause.getClass().getName()) + ")", Redacted.of(cause, text));
    }

    private static String description(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StatusRuntimeException s) {
                return s.getStatus().getDescription();
            }
            if (c instanceof FirestoreException f && f.getStatus() != null) {
                return f.getStatus().getDescription();
            }
        }
        return null;
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
