package dev.fenceguard.reactor;

import java.time.Duration;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;
import reactor.test.StepVerifier;

/**
 * Installs BlockHound when the test JVM's launcher session opens, before any test starts a thread, and
 * bounds every {@code StepVerifier} verification (a hang fails its test instead of the build). A
 * thread already waiting inside a method when BlockHound instruments it keeps running the old code,
 * outside BlockHound's allowances: fence-guard's timer thread, parked for its next task, would then
 * be reported as blocking the moment it woke up.
 */
public final class InstallBlockHound implements LauncherSessionListener {
    @Override
    public void launcherSessionOpened(LauncherSession session) {
        NoBlocking.install();
        StepVerifier.setDefaultTimeout(Duration.ofSeconds(30));
    }
}
