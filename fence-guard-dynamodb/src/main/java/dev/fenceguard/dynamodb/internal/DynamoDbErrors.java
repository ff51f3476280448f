package dev.fenceguard.dynamodb.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.internal.Stages;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * The module's one error mapper: the SDK's exceptions to fence-guard's codes, for the lock backend and the
 * fenced writes alike; and the one place a thread waits, the blocking face ({@link #join}).
 */
public final class DynamoDbErrors {

    private static final Set<String> AUTH = Set.of("AccessDeniedException", "UnrecognizedClientException",
            "InvalidSignatureException", "MissingAuthenticationTokenException", "MissingAuthenticationToken",
            "IncompleteSignatureException", "ExpiredTokenException", "InvalidClientTokenId", "SignatureDoesNotMatch");
    private static final Set<String> BUSY = Set.of("ProvisionedThroughputExceededException", "RequestLimitExceeded",
            "ThrottlingException", "Throttling", "TransactionConflictException", "TransactionInProgressException",
            "InternalServerError", "InternalFailure", "ServiceUnavailable", "LimitExceededException");

    private DynamoDbErrors() {}

    /** Whether {@code t} is a conditional write's condition failing: an answer, not an error. */
    public static boolean isConditionFailed(Throwable t) {
        return Stages.unwrap(t) instanceof ConditionalCheckFailedException;
    }

    /**
     * Waits for a stage that bounds itself (every stage of this module ends by its deadline), for the
     * blocking faces: its value, or its failure unwrapped. Only a checked failure is mapped here (by
     * {@link #failure}); a runtime exception is thrown as it is, so a stage must already fail with mapped
     * errors (every stage of this module does: the SDK's exceptions are mapped where its futures end). An
     * interrupt does not end the wait: the write was sent, and its answer (or the call timeout) tells what
     * became of it.
     */
    public static <T> T join(CompletionStage<T> stage, String subject, String operation) {
        return Stages.awaitUninterruptibly(stage, cause -> failure(cause, subject, operation));
    }

    /**
     * A {@link FenceGuardException} for a failed call: the AWS error code and HTTP status where there is one,
     * the exception's class, and as cause a {@link Redacted} copy. Never the service's message: it is the
     * server's (or a proxy's) text and can quote an item.
     */
    public static FenceGuardException failure(Throwable cause, String subject, String operation) {
        Throwable c = Stages.unwrap(cause);
        if (c instanceof FenceGuardException f) {
            return f;
        }
        String facts = facts(c);
        String hint = c instanceof ResourceNotFoundException
                ? " (does the table exist? FenceGuardDynamoDb.createLockTable(wait) creates the lock table)" : "";
        return new FenceGuardException(code(c), subject, operation + " failed: " + facts + hint + " ("
                + (c == null ? "no cause" : c.getClass().getName()) + ")", Redacted.of(c, facts));
    }

    /** The stand-in for {@code cause} in a cause chain: its class, AWS error code and HTTP status, never its message. */
    public static Throwable redacted(Throwable cause) {
        Throwable c = Stages.unwrap(cause);
        return Redacted.of(c, facts(c));
    }

    private static String facts(Throwable c) {
        if (c instanceof AwsServiceException a) {
            String error = a.awsErrorDetails() != null ? a.awsErrorDetails().errorCode() : null;
            return "DynamoDB " + (error == null ? "error" : error) + ", HTTP " + a.statusCode();
        }
        return c instanceof SdkClientException ? "no answer from DynamoDB" : "DynamoDB call failed";
    }

    static ErrorCode code(Throwable c) {
        if (c instanceof ApiCallTimeoutException || c instanceof ApiCallAttemptTimeoutException) {
            return ErrorCode.TIMEOUT;
        }
        if (c instanceof ResourceNotFoundException) {
            return ErrorCode.INVALID_ARGUMENT;
        }
        if (c instanceof AwsServiceException a) {
            String error = a.awsErrorDetails() != null ? a.awsErrorDetails().errorCode() : "";
            if (AUTH.contains(error) || a.statusCode() == 401 || a.statusCode() == 403) {
                return ErrorCode.AUTH;
            }
            if (BUSY.contains(error) || a.isThrottlingException() || a.statusCode() >= 500) {
                return ErrorCode.UNAVAILABLE;
            }
            if ("ValidationException".equals(error) || "SerializationException".equals(error) || a.statusCode() == 400) {
                return ErrorCode.INVALID_ARGUMENT;
            }
            return ErrorCode.INTERNAL;
        }
        if (c instanceof SdkClientException) {
            for (Throwable t = c; t != null; t = t.getCause()) {
                if (t instanceof java.util.concurrent.TimeoutException || t instanceof java.net.SocketTimeoutException) {
                    return ErrorCode.TIMEOUT;
                }
            }
            return ErrorCode.UNAVAILABLE;
        }
        return ErrorCode.INTERNAL;
    }
}
