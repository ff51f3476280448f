package dev.fenceguard.core.internal;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What a piece of code logs on its own thread: slf4j-simple writes to the System.err of the moment it logs. */
public final class CapturedLog {

    private CapturedLog() {}

    /** Runs {@code run} and returns what it logged; the text is also printed, so a failing run still shows it. */
    public static String of(Runnable run) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            run.run();
        } finally {
            System.setErr(original);
        }
        String text = err.toString(StandardCharsets.UTF_8);
        original.print(text);
        return text;
    }
}
