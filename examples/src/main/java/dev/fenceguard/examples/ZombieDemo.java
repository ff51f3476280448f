package dev.fenceguard.examples;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.ManualTimeSource;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;

/**
 * The zombie story in one screen: worker A takes the lock, pauses past its lease (a long GC), worker B
 * takes the lock and writes, then A wakes up and writes too. Without a fence check A's write wins and
 * overwrites B; with one, the resource refuses A's write as stale.
 *
 * <p>Runs in memory with a hand-driven clock so the timeline is exact. Exits non-zero if the fenced run
 * ever lets the stale write through.
 */
public final class ZombieDemo {

    /** A record with a stored fence; {@code fenced} chooses whether writes check it. */
    static final class Record {
        private String value = "(empty)";
        private long fence;

        synchronized WriteOutcome write(String newValue, long presented, boolean fenced) {
            if (fenced && !FencePolicy.SAME_OR_NEWER.admits(presented, fence)) {
                return new WriteOutcome.Stale("order:42", presented, fence, FencePolicy.SAME_OR_NEWER);
            }
            value = newValue;
            fence = Math.max(fence, presented);
            return new WriteOutcome.Applied("order:42", presented);
        }

        synchronized String value() {
            return value;
        }
    }

    public static void main(String[] args) {
        int status = run(System.out);
        if (status != 0) {
            System.exit(status);
        }
    }

    static int run(PrintStream out) {
        String unfenced = scenario(out, false);
        out.println();
        String fenced = scenario(out, true);
        out.println();
        out.println("without fencing the order ends as: " + unfenced);
        out.println("with fence-guard the order ends as: " + fenced);
        boolean ok = fenced.equals("paid by B") && unfenced.equals("paid by A");
        out.println(ok ? "OK: the stale write was rejected at the resource" : "FAILED: a stale write got through");
        return ok ? 0 : 1;
    }

    private static String scenario(PrintStream out, boolean fenced) {
        ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-01-01T12:00:00Z"));
        LockClient locks = LockClient.builder(new InMemoryLockBackend(time)).withTimeSource(time)
                .withMetrics(LockMetrics.none()).build();
        Record order = new Record();
        Duration ttl = Duration.ofSeconds(10);
        out.println(fenced ? "== with fence-guard: the resource checks the fence ==" : "== without fencing ==");

        Lease a = locks.tryAcquire("order:42", ttl).orElseThrow();
        line(out, time, "A acquires the lock, fence " + a.fence().value() + ", lease " + ttl.toSeconds() + " s");
        line(out, time, "A pauses (stop-the-world GC)");
        time.advance(Duration.ofSeconds(15));
        line(out, time, "A's lease expired at " + a.expiresAt().toString().substring(11) + " while A was paused");

        Lease b = locks.tryAcquire("order:42", ttl).orElseThrow();
        line(out, time, "B acquires the lock, fence " + b.fence().value());
        line(out, time, "B writes 'paid by B': " + order.write("paid by B", b.fence().value(), fenced));
        time.advance(Duration.ofSeconds(1));
        b.close();
        line(out, time, "B releases");

        time.advance(Duration.ofSeconds(2));
        line(out, time, "A wakes up and writes 'paid by A' with fence " + a.fence().value() + ": "
                + order.write("paid by A", a.fence().value(), fenced));
        a.close();
        return order.value();
    }

    private static void line(PrintStream out, ManualTimeSource time, String text) {
        out.printf("  t=%-20s %s%n", time.now().toString().substring(11), text);
    }
}
