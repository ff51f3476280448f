package dev.fenceguard.examples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.testkit.servers.TestPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The payment service over HTTP on a random port, replaying the zombie story: worker A takes the order's
 * lock and is paused (a stop-the-world GC) past its lease; worker B pays; A wakes up and tries to pay
 * too. A is refused at the database (409, nothing committed) and the card is charged once.
 */
class PaymentApplicationTest {

    static TestPostgres.Schema schema;
    static ConfigurableApplicationContext app;
    static String base;
    static final CountDownLatch aHoldsTheLock = new CountDownLatch(1);
    static final CountDownLatch aWakesUp = new CountDownLatch(1);
    final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        schema = TestPostgres.server().newSchema("bootapp");
        String url = TestPostgres.server().jdbcUrl();
        SpringApplication application = PaymentApplication.application(new String[0]);
        // A's "GC pause": it stops after taking the lock, until the test lets it go on.
        application.addInitializers(ctx -> ctx.getBeanFactory().registerSingleton("gcPause", (Pause) (orderId, worker) -> {
            if (worker.equals("A")) {
                aHoldsTheLock.countDown();
                aWakesUp.await();
            }
        }));
        app = application.run("--spring.datasource.url=" + url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema.name(),
                "--fence-guard.jdbc.schema=" + schema.name(), "--server.port=0");
        base = "http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
        schema.close();
    }

    HttpResponse<String> post(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    String get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void theZombieIsRefusedAtTheDatabaseAndTheCardIsChargedOnce() throws Exception {
        CompletableFuture<HttpResponse<String>> a = http.sendAsync(HttpRequest.newBuilder(URI.create(base + "/orders/o-1/pay?worker=A"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        aHoldsTheLock.await();
        // A's pause outlasts its lease: on the server, the lease runs out (as it would after TTL without renewals).
        schema.execute("UPDATE " + schema.name() + ".fence_guard_locks SET expires_at = clock_timestamp() WHERE lock_key = 'orders:o-1'");

        HttpResponse<String> b = post("/orders/o-1/pay?worker=B");
        assertThat(b.statusCode()).as(b.body()).isEqualTo(200);
        String charge = b.body().replaceAll(".*\"charge\":\"(ch_[0-9]+)\".*", "$1");
        String chargesAfterB = get("/orders/o-1").replaceAll(".*(\"charges\":\\[[^]]*]).*", "$1");

        aWakesUp.countDown();
        HttpResponse<String> zombie = a.get();
        assertThat(zombie.statusCode()).as(zombie.body()).isEqualTo(409);
        assertThat(zombie.body()).contains("\"error\":\"stale\"");

        String order = get("/orders/o-1");
        assertThat(order).contains("\"status\":\"paid by B (" + charge + ")\"")
                .as("A's charge carried the same idempotency key: no new charge").contains(chargesAfterB);
    }

    @Test
    void anOrderIsPaidOnce() throws Exception {
        HttpResponse<String> first = post("/orders/o-2/pay?worker=web");
        HttpResponse<String> again = post("/orders/o-2/pay?worker=web");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(again.statusCode()).isEqualTo(200);
        String charge = first.body().replaceAll(".*\"charge\":\"(ch_[0-9]+)\".*", "$1");
        assertThat(again.body()).as("the retry is recognised by its idempotency key").contains("\"charge\":\"" + charge + "\"");
    }

    String charges() throws Exception {
        return get("/orders/o-1").replaceAll(".*(\"charges\":\\[[^]]*]).*", "$1");
    }

    @Test
    void aNegativeZeroOrAbsurdAmountIsRefusedWith400AndNothingIsChargedOrWritten() throws Exception {
        String before = charges();
        for (String amount : java.util.List.of("-4200", "0", "100000001", String.valueOf(Long.MIN_VALUE))) {
            HttpResponse<String> r = post("/orders/o-3/pay?worker=web&amountCents=" + amount);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
            assertThat(r.body()).contains("\"error\":\"invalid request\"")
                    .contains("amountCents must be between 1 and 100000000, was " + amount);
        }
        assertThat(get("/orders/o-3")).contains("\"status\":\"none\"");
        assertThat(charges()).as("no charge made").isEqualTo(before);
    }

    @Test
    void anOverLongOrMalformedOrderIdIsRefusedWith400() throws Exception {
        String before = charges();
        for (String id : java.util.List.of("1".repeat(600), "9".repeat(65), "o%201", "%C3%A9t%C3%A9")) {
            HttpResponse<String> r = post("/orders/" + id + "/pay?worker=web");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
            assertThat(r.body()).contains("\"error\":\"invalid request\"").contains("order id must be 1 to 64 letters, digits");
            assertThat(r.body()).as("the id is not echoed").doesNotContain("999999999");
        }
        HttpResponse<String> r = post("/orders/o-4/pay?worker=" + "w".repeat(65));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.body()).contains("worker must be 1 to 64 letters, digits");
        HttpResponse<String> lookup = http.send(HttpRequest.newBuilder(URI.create(base + "/orders/" + "1".repeat(600))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(lookup.statusCode()).as(lookup.body()).isEqualTo(400);
        assertThat(charges()).as("no charge made").isEqualTo(before);
        assertThat(post("/orders/o-64-" + "x".repeat(59) + "/pay?worker=web").statusCode()).as("64 characters are fine").isEqualTo(200);
    }

    @Test
    void theReadmesPayMethodRunsUnderTheLockAndWritesWithItsFence() throws Exception {
        ReadmePayments.Receipt receipt = app.getBean(ReadmePayments.class).pay("o-readme", 4200, null);   // the lease comes from @FencedLock
        assertThat(receipt.charge()).startsWith("ch_");
        assertThat(schema.query("SELECT status || ' ' || (fence_token > 0) FROM " + schema.name() + ".orders WHERE id = 'o-readme'"))
                .containsExactly("paid true");
    }
}
