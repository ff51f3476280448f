package dev.fenceguard.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.testkit.servers.TestFirestore;
import dev.fenceguard.testkit.servers.TestPostgres;
import dev.fenceguard.testkit.servers.TestRedis;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs each example's entry point and checks what it prints and the exit status it returns. */
class ExamplesTest {

    @BeforeAll
    static void quiet() {
        Quiet.apply();
    }

    private record Run(int status, String out, String err) {}

    private interface Main {
        int run(PrintStream out, PrintStream err) throws Exception;
    }

    private static Run run(Main main) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = main.run(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static void assertTheStory(Run r) {
        assertThat(r.status()).as(r.out() + r.err()).isZero();
        assertThat(r.out())
                .contains("== without fencing ==", "== with fence-guard ==")
                .contains("(a second charge!)")
                .contains("the gateway recognised the key: no new charge")
                .contains("A marks the order paid -> Stale: presented fence")
                .containsPattern("without fencing: order ends as 'paid by A \\(ch_2\\)', card charged 2 time\\(s\\)")
                .containsPattern("with fence-guard: order ends as 'paid by B \\(ch_1\\)', card charged 1 time\\(s\\)")
                .contains("B charges the card through the idempotency store, key orders.")
                .containsPattern("-> ch_1 \\(gateway called, answer recorded under fence \\d+\\)")
                // the retried worker: the recorded charge comes back and the gateway is not called again
                .contains("== with fence-guard: a worker crashes after charging ==")
                .contains("A crashes before marking the order paid")
                .containsPattern("B runs the same charge step -> ch_1 \\(replayed: recorded under fence \\d+, the gateway was not called\\)")
                .containsPattern("a worker that crashed after charging: order ends as 'paid by B \\(ch_1\\)', gateway called 1 time\\(s\\), "
                        + "card charged 1 time\\(s\\)")
                .contains("OK: the zombie's write was refused at the resource, the card was charged once, "
                        + "and the retried worker reused the recorded charge");
    }

    @Test
    void paymentDemoOnEmbeddedPostgres() throws Exception {
        Run r = run((out, err) -> PaymentZombieDemo.run(new String[0], out, err));
        assertThat(r.out()).contains("on PostgreSQL 18.");
        assertTheStory(r);
    }

    @Test
    void paymentDemoOnRedis() throws Exception {
        assertTheStory(run((out, err) -> PaymentZombieDemo.run(new String[] {"--redis", TestRedis.server().uri().toString()}, out, err)));
    }

    @Test
    void paymentDemoOnFirestore() throws Exception {
        assertTheStory(run((out, err) -> PaymentZombieDemo.run(new String[] {"--firestore-emulator", TestFirestore.server().hostPort()}, out, err)));
    }

    @Test
    void paymentDemoRefusesBadArguments() throws Exception {
        Run r = run((out, err) -> PaymentZombieDemo.run(new String[] {"--mysql", "x"}, out, err));
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("unknown flag '--mysql'").contains("usage:");
        assertThat(run((out, err) -> PaymentZombieDemo.run(new String[] {"--redis"}, out, err)).status()).isEqualTo(2);
    }

    @Test
    void inventoryDemoKeepsTheStockRight() throws Exception {
        Run r = run((out, err) -> InventoryDemo.run(new String[] {"--redis", TestRedis.server().uri().toString()}, out));
        assertThat(r.status()).as(r.out()).isZero();
        assertThat(r.out()).containsPattern("worker Z wakes and writes 10 - 3 = 7 with fence \\d+: Stale")
                .contains("final stock 6 (expected 10 - 2 - 2 = 6): OK");
    }

    @Test
    void leaderElectionDemoRecordsTheRunOnceByTheCurrentLeader() throws Exception {
        Run r = run((out, err) -> LeaderElectionDemo.run(new String[] {"--redis", TestRedis.server().uri().toString()}, out));
        assertThat(r.status()).as(r.out()).isZero();
        assertThat(r.out())
                .containsPattern("node-. is elected, term \\d+, and sends tonight's run: Applied")
                .containsPattern("node-. is told: revoked \\((UNREACHABLE|EXPIRED)\\)")
                .containsPattern("node-. is elected, term \\d+ \\(greater\\), and sends the run: Applied")
                .containsPattern("wakes and sends again with term \\d+: Stale \\(the record holds term \\d+\\)")
                .contains("OK, sent once by the current leader");
    }

    @Test
    void singleflightDemoComputesOnceAndRefusesTheZombie() throws Exception {
        Run r = run((out, err) -> SingleflightDemo.run(new String[] {"--redis", TestRedis.server().uri().toString()}, out));
        assertThat(r.status()).as(r.out()).isZero();
        assertThat(r.out())
                .contains("12 requests on 3 nodes got 'EUR/USD 1.0842'; the provider was called 1 time(s)")
                .containsPattern("node-a computes tomorrow's rates under fence (\\d+) and stalls")
                .containsPattern("node-b finds the lease expired, computes under fence \\d+ and publishes 'EUR/USD 1.0857 \\(fresh\\)'")
                .containsPattern("node-a wakes and publishes its stale rates under fence \\d+: refused; its caller gets 'EUR/USD 1.0857 \\(fresh\\)'")
                .contains("OK: computed once for twelve requests, and the zombie's stale rates never reached a caller");
    }

    @Test
    void quickStartRunsOnTheTestPostgres() throws Exception {
        Run r = run((out, err) -> QuickStart.run(new String[] {"--jdbc-url", TestPostgres.server().jdbcUrl()}, out));
        assertThat(r.status()).as(r.out()).isZero();
        assertThat(r.out()).containsPattern("1\\. withLock, charge, fenced update: Applied.*; charges made: \\[ch_1 \\(4200 cents, key ")
                .containsPattern("2\\. withLock, claim, read, fenced update: Applied")
                .containsPattern("3\\. a zombie with the fence of step 1 sets items to 0: Stale")
                .containsPattern("order 42 is now: paid, 3 items, fence \\d+: OK");
    }

    @Test
    void springIntegrationDemoHandsLeadershipOverAndRefusesTheLateWrite() throws Exception {
        Run r = run((out, err) -> SpringIntegrationDemo.run(new String[] {"--jdbc-url", TestPostgres.server().jdbcUrl()}, out));
        assertThat(r.status()).as(r.out()).isZero();
        assertThat(r.out()).containsPattern("1\\. lock, fenced update of order 42 with the lock's fence: Applied")
                .contains("tryLock(5 s) and the same update with a new, greater fence: done")
                .containsPattern("3\\. node-a hands over; node-b leads with term \\d+")
                .containsPattern("4\\. node-a, late, records the run with term \\d+: Stale")
                .containsPattern("recorded by node-b, term \\d+: OK");
    }

    @Test
    void migrationDemoAddsTheColumnWithoutRewriteAndGuardsWrites() throws Exception {
        Run r = run((out, err) -> MigrateExistingTableDemo.run(new String[0], out));
        assertThat(r.status()).as(r.out()).isZero();
        assertThat(r.out()).contains("generated V2__fence_guard_orders_fence_token.sql")
                .contains("ADD COLUMN IF NOT EXISTS \"fence_token\" BIGINT NOT NULL DEFAULT 0")
                .contains("3. Flyway applied 1 migration; table rewritten: false; rows reading fence 0: 1000")
                .contains("row 7 is now: delivered / fence 2").endsWith("OK\n");
    }
}
