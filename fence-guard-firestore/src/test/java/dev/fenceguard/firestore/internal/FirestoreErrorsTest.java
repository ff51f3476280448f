package dev.fenceguard.firestore.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import io.grpc.Status;
import java.io.PrintWriter;
import java.io.StringWriter;
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
        assertThat(printed(e)).doesNotContain(SECRET);
    }

    @Test
    void aServiceDescriptionIsKept() {
        FenceGuardException e = FirestoreErrors.failure(Status.UNAVAILABLE.withDescription("Connection refused")
                .asRuntimeException(), "orders:1", "lookup");
        assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(e.getMessage()).contains("gRPC UNAVAILABLE: Connection refused");
    }

    private static String printed(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
