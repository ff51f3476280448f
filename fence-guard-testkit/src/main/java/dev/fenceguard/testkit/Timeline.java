package dev.fenceguard.testkit;

import java.util.List;

/**
 * How the property templates fail: with what went wrong and the timeline of the history so far, one line
 * per step, so that a shrunk failure reads as the story of what each side answered.
 */
final class Timeline {

    private Timeline() {}

    /** Fails with {@code what} and the timeline unless {@code ok}. */
    static void require(boolean ok, String what, List<String> timeline) {
        if (!ok) {
            throw failure(what, timeline, null);
        }
    }

    /** The failure {@code what} with the timeline, caused by {@code cause} (or null). */
    static AssertionError failure(String what, List<String> timeline, Throwable cause) {
        return new AssertionError(what + "\ntimeline:\n  " + String.join("\n  ", timeline), cause);
    }
}
