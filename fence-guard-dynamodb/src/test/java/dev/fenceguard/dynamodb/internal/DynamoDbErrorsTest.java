package dev.fenceguard.dynamodb.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/** The SDK's exceptions as fence-guard's codes, and the service's text never in a message. */
class DynamoDbErrorsTest {

    private static final String SECRET = "item {orderId=42, card=4111}";

    private static DynamoDbException service(int status, String code) {
        return (DynamoDbException) DynamoDbException.builder().statusCode(status)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(SECRET).build()).message(SECRET).build();
    }

    @ParameterizedTest
    @CsvSource({
        "400, ValidationException, INVALID_ARGUMENT",
        "400, AccessDeniedException, AUTH",
        "400, UnrecognizedClientException, AUTH",
        "403, SomethingElse, AUTH",
        "400, ProvisionedThroughputExceededException, UNAVAILABLE",
        "400, ThrottlingException, UNAVAILABLE",
        "500, InternalServerError, UNAVAILABLE",
        "503, ServiceUnavailable, UNAVAILABLE",
        "400, TransactionConflictException, UNAVAILABLE",
        "418, Teapot, INTERNAL",
    })
    void serviceErrorsMapByTheirAwsCodeAndKeepNoServiceText(int status, String awsCode, ErrorCode expected) {
        FenceGuardException f = DynamoDbErrors.failure(new CompletionException(service(status, awsCode)), "orders:42", "acquire");
        assertThat(f.code()).isEqualTo(expected);
        assertThat(f.getMessage()).contains(awsCode).contains("HTTP " + status).doesNotContain(SECRET);
        assertThat(f.getCause().getMessage()).doesNotContain(SECRET);
    }

    @Test
    void aMissingTableIsInvalidArgumentWithAHint() {
        var missing = ResourceNotFoundException.builder().statusCode(400)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("ResourceNotFoundException").errorMessage(SECRET).build()).build();
        FenceGuardException f = DynamoDbErrors.failure(missing, "orders:42", "acquire");
        assertThat(f.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(f.getMessage()).contains("createLockTable").doesNotContain(SECRET);
    }

    @Test
    void clientSideFailuresAreUnavailableOrTimeout() {
        assertThat(DynamoDbErrors.failure(SdkClientException.create("Unable to execute HTTP request: " + SECRET), null, "lookup").code())
                .isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(DynamoDbErrors.failure(SdkClientException.create(SECRET), null, "lookup").getMessage()).doesNotContain(SECRET);
        assertThat(DynamoDbErrors.failure(ApiCallTimeoutException.create(1000), null, "lookup").code()).isEqualTo(ErrorCode.TIMEOUT);
    }

    @Test
    void aFailedConditionIsAnAnswerNotAnError() {
        assertThat(DynamoDbErrors.isConditionFailed(new CompletionException(ConditionalCheckFailedException.builder().build()))).isTrue();
        assertThat(DynamoDbErrors.isConditionFailed(service(400, "ValidationException"))).isFalse();
    }
}
