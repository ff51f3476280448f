package dev.fenceguard.testkit;

/** What the testkit's blocking views throw when a stage they waited for failed. */
final class Stages {

    private Stages() {}

    /**
     * The failure of a stage, to throw as it is: a runtime exception or error unchanged (so tests see
     * the {@code FenceGuardException} the stage failed with), anything else wrapped.
     */
    static RuntimeException failure(Throwable wrapper) {
        Throwable cause = wrapper.getCause() != null ? wrapper.getCause() : wrapper;
        if (cause instanceof RuntimeException r) {
            return r;
        }
        if (cause instanceof Error err) {
            throw err;
        }
        return new IllegalStateException(cause);
    }
}
