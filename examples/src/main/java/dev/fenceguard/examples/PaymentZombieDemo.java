package dev.fenceguard.examples;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyKey;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.io.PrintStream;
import java.time.Duration;
import java.util.UUID;

/**
 * The payment "zombie", end to end. Two workers process one order. Worker A takes the lock and is
 * paused (a stop-the-world GC) past its lease; worker B takes the lock, charges the card and marks
 * the order paid; then A wakes up and does the same.
 *
 * <p>The zombie scenario runs twice. Without fencing, A's write overwrites B's and A's charge, sent with a
 * key that includes its lease ({@code order-fence}, the seeds' trap), charges the card a second time.
 * With fence-guard, A's write is refused as {@code Stale} at the resource, and both workers send the
 * same operation-scoped idempotency key, so the gateway charges once.
 *
 * <p>A third scenario, with fence-guard: worker A charges the card through the
 * {@link dev.fenceguard.core.idempotency.IdempotencyStore}, which records the gateway's answer under
 * the charge's idempotency key and A's fence, then crashes before marking the order paid. The order is
 * retried by worker B with a newer lease: its charge step replays the recorded charge without calling
 * the gateway, and B marks the order paid with it.
 *
 * <pre>
 * ./mvnw -q -pl examples -am -DskipTests package exec:java                           # embedded PostgreSQL
 * ... exec:java -Dexec.args="--jdbc-url jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
 * ... exec:java -Dexec.args="--redis redis://127.0.0.1:6379"
 * ... exec:java -Dexec.args="--firestore-emulator 127.0.0.1:8087"
 * </pre>
 *
 * Exits 1 if a fenced run ever lets a stale write through, charges twice or calls the gateway again
 * after a crash, 2 on bad arguments.
 */
public final class PaymentZombieDemo {

    private static final Duration TTL = Duration.ofMillis(800);

    public static void main(String[] args) throws Exception {
        Quiet.apply();
        int status = run(args, System.out, System.err);
        System.exit(status); // also ends the emulator/embedded-server threads of the harness
    }

    /** Runs the demo; returns the process exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            out.println(usage());
            return 0;
        }
        if (args.length != 0 && args.length != 2) {
            err.println("error: expected no arguments or one flag with a value\n" + usage());
            return 2;
        }
        try (OrderStore store = open(args)) {
            out.println("fence-guard payment zombie demo on " + store.describe() + ", lease " + TTL.toMillis() + " ms");
            out.println();
            Outcome naive = scenario(store, false, out);
            out.println();
            Outcome guarded = scenario(store, true, out);
            out.println();
            Outcome crashed = crashAfterCharging(store, out);
            out.println();
            out.println("without fencing: order ends as '" + naive.finalStatus + "', card charged " + naive.charges + " time(s)");
            out.println("with fence-guard: order ends as '" + guarded.finalStatus + "', card charged " + guarded.charges + " time(s)");
            out.println("a worker that crashed after charging: order ends as '" + crashed.finalStatus + "', gateway called "
                    + crashed.gatewayRequests + " time(s), card charged " + crashed.charges + " time(s)");
            boolean safe = guarded.finalStatus.startsWith("paid by B") && guarded.charges == 1 && !guarded.zombieApplied
                    && crashed.finalStatus.equals("paid by B (ch_1)") && crashed.charges == 1 && crashed.gatewayRequests == 1;
            out.println(safe ? "OK: the zombie's write was refused at the resource, the card was charged once, "
                    + "and the retried worker reused the recorded charge"
                    : "FAILED: a fenced run let a stale write through, charged twice or called the gateway again");
            return safe ? 0 : 1;
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage() + "\n" + usage());
            return 2;
        }
    }

    static String usage() {
        return "usage: PaymentZombieDemo [--jdbc-url URL | --redis redis://HOST:PORT | --firestore-emulator HOST:PORT]\n"
                + "       (no flag: embedded PostgreSQL)";
    }

    private static OrderStore open(String[] args) throws Exception {
        if (args.length == 0) {
            return PostgresOrderStore.open(TestPostgres.embedded().jdbcUrl(), "embedded");
        }
        return switch (args[0]) {
            case "--jdbc-url" -> PostgresOrderStore.open(args[1], "given URL");
            case "--redis" -> RedisOrderStore.open(args[1]);
            case "--firestore-emulator" -> FirestoreOrderStore.open(args[1]);
            default -> throw new IllegalArgumentException("unknown flag '" + args[0] + "'");
        };
    }

    private record Outcome(String finalStatus, int charges, boolean zombieApplied, int gatewayRequests) {}

    private static Outcome scenario(OrderStore store, boolean fenced, PrintStream out) throws Exception {
        String orderId = "order-" + UUID.randomUUID().toString().substring(0, 6);
        store.createOrder(orderId);
        FakeGateway gateway = new FakeGateway();
        Timeline t = new Timeline(out);
        out.println(fenced ? "== with fence-guard ==" : "== without fencing ==");

        Lease a = store.locks().tryAcquire(orderId, TTL).orElseThrow();
        t.say("A acquires the lock on " + orderId + ": fence " + a.fence().value());
        t.say("A is paused: a stop-the-world GC");
        Thread.sleep(TTL.multipliedBy(2).toMillis());
        t.say("A's lease has expired; A cannot know, it is still paused");

        Lease b = store.locks().acquire(orderId, TTL.multipliedBy(10), Duration.ofSeconds(10)).orElseThrow();
        t.say("B acquires the lock: fence " + b.fence().value());
        String bCharge;
        if (fenced) {
            IdempotencyResult<String> charged = chargeOnce(store, gateway, orderId, b);
            bCharge = charged.result().orElseThrow();
            t.say("B charges the card through the idempotency store, key " + chargeKey(orderId, b, true) + " -> " + bCharge
                    + " (" + kind(charged) + ")");
        } else {
            bCharge = gateway.charge(chargeKey(orderId, b, false), 4200);
            t.say("B charges the card, key " + chargeKey(orderId, b, false) + " -> " + bCharge);
        }
        t.say("B marks the order paid -> " + brief(store.writeStatus(orderId, "paid by B (" + bCharge + ")", b.fence(), fenced)));
        b.close();
        t.say("B releases the lock");

        t.say("A wakes up and carries on with fence " + a.fence().value());
        String aCharge = gateway.charge(chargeKey(orderId, a, fenced), 4200);
        t.say("A charges the card, key " + chargeKey(orderId, a, fenced) + " -> " + aCharge
                + (aCharge.equals(bCharge) ? " (the gateway recognised the key: no new charge)" : " (a second charge!)"));
        WriteOutcome zombie = store.writeStatus(orderId, "paid by A (" + aCharge + ")", a.fence(), fenced);
        t.say("A marks the order paid -> " + brief(zombie));
        a.close();
        String status = store.readStatus(orderId);
        t.say("order " + orderId + " is now '" + status + "'; charges made: " + gateway.charges());
        return new Outcome(status, gateway.charges().size(), zombie.isApplied(), gateway.requests());
    }

    /** A charges, its answer recorded, and crashes; B retries the order and reuses the recorded charge. */
    private static Outcome crashAfterCharging(OrderStore store, PrintStream out) throws Exception {
        String orderId = "order-" + UUID.randomUUID().toString().substring(0, 6);
        store.createOrder(orderId);
        FakeGateway gateway = new FakeGateway();
        Timeline t = new Timeline(out);
        out.println("== with fence-guard: a worker crashes after charging ==");

        Lease a = store.locks().tryAcquire(orderId, TTL).orElseThrow();
        t.say("A acquires the lock on " + orderId + ": fence " + a.fence().value());
        IdempotencyResult<String> first = chargeOnce(store, gateway, orderId, a);
        t.say("A charges the card through the idempotency store -> " + first.result().orElseThrow() + " (" + kind(first) + ")");
        t.say("A crashes before marking the order paid; its lease runs out");
        Thread.sleep(TTL.multipliedBy(2).toMillis());

        Lease b = store.locks().acquire(orderId, TTL.multipliedBy(10), Duration.ofSeconds(10)).orElseThrow();
        t.say("the order is retried by B: fence " + b.fence().value());
        IdempotencyResult<String> retried = chargeOnce(store, gateway, orderId, b);
        String charge = retried.result().orElseThrow();
        t.say("B runs the same charge step -> " + charge + " (" + kind(retried) + ")");
        t.say("B marks the order paid -> " + brief(store.writeStatus(orderId, "paid by B (" + charge + ")", b.fence(), true)));
        b.close();
        a.close(); // long expired: nothing left to release
        String status = store.readStatus(orderId);
        t.say("order " + orderId + " is now '" + status + "'; gateway requests: " + gateway.requests() + "; charges made: "
                + gateway.charges());
        return new Outcome(status, gateway.charges().size(), false, gateway.requests());
    }

    /**
     * The charge step of a worker holding {@code lease}: the gateway is called at most once per order,
     * its answer recorded under the charge's idempotency key and the lease's fence.
     */
    private static IdempotencyResult<String> chargeOnce(OrderStore store, FakeGateway gateway, String orderId, Lease lease)
            throws Exception {
        String key = chargeKey(orderId, lease, true);
        return store.charges().call(key, Fingerprint.ofParts(orderId, "4200", "EUR"), lease, ResultCodec.utf8(),
                () -> gateway.charge(key, 4200));
    }

    private static String kind(IdempotencyResult<String> r) {
        return switch (r) {
            case IdempotencyResult.Executed<String> e -> "gateway called, answer recorded under fence " + e.fence().value();
            case IdempotencyResult.Replayed<String> p -> "replayed: recorded under fence " + p.fence().value()
                    + ", the gateway was not called";
            case IdempotencyResult.InProgress<String> i -> "in progress under fence " + i.holder().value();
            case IdempotencyResult.FailedFinally<String> f -> "failed for good: " + f.reason();
        };
    }

    /**
     * The idempotency key of the charge. fence-guard's way names the business operation; the naive way
     * is the seeds' {@code {orderId}-{fence}} trap, which differs between the zombie and its successor.
     */
    static String chargeKey(String orderId, Lease lease, boolean fenced) {
        return fenced
                ? IdempotencyKey.builder(IdempotencyKey.Profile.STRIPE).scope("orders").id(orderId).operation("charge").build()
                : orderId + "-" + lease.fence().value();
    }

    private static String brief(WriteOutcome o) {
        return switch (o) {
            case WriteOutcome.Applied a -> "Applied";
            case WriteOutcome.Stale s -> "Stale: presented fence " + s.presentedFence() + ", the order holds fence " + s.currentFence();
            case WriteOutcome.NotFound n -> "NotFound";
        };
    }

    /** Prints lines with the milliseconds since the scenario started. */
    static final class Timeline {
        private final PrintStream out;
        private final long start = System.nanoTime();

        Timeline(PrintStream out) {
            this.out = out;
        }

        void say(String what) {
            out.printf("  t=%5d ms  %s%n", (System.nanoTime() - start) / 1_000_000, what);
        }
    }
}
