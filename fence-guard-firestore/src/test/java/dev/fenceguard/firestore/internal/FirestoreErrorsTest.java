package dev.fenceguard.firestore.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.testkit.Printed;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

/** The mapping keeps status codes and class names, and leaves out descriptions that can quote a document. */
class FirestoreErrorsTest {

    private static final String SECRET = "AAAAAAAAAAAAAAAAAAAAAA"; // shaped like a lock id

    @Test
    void aDescriptionThatCouldQuoteADocumentIsWithheldFromMessageAndCauseChain() {
        Throwable sdk = Status.INVALID_ARGUMENT.withDescription("bad value '" + SECRET + "' in field lockId")
                .asRuntimeException();
        FenceGuardException e = FirestoreErrors.failure(new RuntimeException("wrapper " + SECRET, sdk), "orders:1", "acquire");
        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(e.getMessage()).contains("acquire failed: gRPC INVALID_ARGUMENT").contains("java.lang.RuntimeException");
        assertThat(e.getCause().getCause()).hasMessageStartingWith("io.grpc.StatusRuntimeException");
        assertThat(Printed.everything(e)).doesNotContain(SECRET);
    }

    @Test
    void noDescriptionIsKeptWhateverTheStatusCode() {
        // A description is the server's (or a proxy's) text: even PERMISSION_DENIED can name the document
        // a security rule refused. Only the code is kept.
        for (Status.Code code : Status.Code.values()) {
            if (code == Status.Code.OK) {
                continue;
            }
            FenceGuardException e = FirestoreErrors.failure(Status.fromCode(code).withDescription("refused " + SECRET)
                    .asRuntimeException(), "orders:1", "lookup");
            assertThat(e.getMessage()).as("%s", code).contains("lookup failed: gRPC " + code + " (io.grpc.StatusRuntimeException)");
            assertThat(Printed.everything(e)).as("%s", code).doesNotContain(SECRET);
        }
    }
}
