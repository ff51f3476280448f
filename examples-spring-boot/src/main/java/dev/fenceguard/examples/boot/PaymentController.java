package dev.fenceguard.examples.boot;

import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.spring.LockNotAcquiredException;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /orders/{id}/pay}, {@code GET /orders/{id}}. Input is checked here, before any lock is
 * taken or any money moves: an order id and a worker name are 1 to 64 letters, digits, {@code -} or
 * {@code _}, an amount is 1 to {@value #MAX_AMOUNT_CENTS} cents. Bad input, and any argument fence-guard
 * refuses (a lock key or idempotency key it cannot build), is answered 400 with the reason.
 */
@RestController
public class PaymentController {

    /** A sanity bound (1,000,000.00), not a business rule: an amount above it is a typo or an attack. */
    static final long MAX_AMOUNT_CENTS = 100_000_000L;

    /** What this service issues as order ids (and accepts as worker names). */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private final PaymentService payments;
    private final PaymentGateway gateway;
    private final JdbcClient jdbc;

    PaymentController(PaymentService payments, PaymentGateway gateway, JdbcClient jdbc) {
        this.payments = payments;
        this.gateway = gateway;
        this.jdbc = jdbc;
    }

    @PostMapping("/orders/{id}/pay")
    public PaymentService.Receipt pay(@PathVariable("id") String id, @RequestParam(name = "worker", defaultValue = "web") String worker,
            @RequestParam(name = "amountCents", defaultValue = "4200") long amountCents) throws InterruptedException {
        requireName("order id", id);
        requireName("worker", worker);
        if (amountCents < 1 || amountCents > MAX_AMOUNT_CENTS) {
            throw new IllegalArgumentException("amountCents must be between 1 and " + MAX_AMOUNT_CENTS + ", was " + amountCents);
        }
        return payments.pay(id, worker, amountCents, null); // the lease argument is supplied by @FencedLock
    }

    @GetMapping("/orders/{id}")
    public Map<String, Object> order(@PathVariable("id") String id) {
        requireName("order id", id);
        List<Map<String, Object>> rows = jdbc.sql("SELECT status, fence_token FROM orders WHERE id = ?").param(id).query().listOfRows();
        return Map.of("id", id, "status", rows.isEmpty() ? "none" : rows.get(0).get("status"),
                "fence", rows.isEmpty() ? 0 : rows.get(0).get("fence_token"), "charges", gateway.charges());
    }

    /** A zombie: its lease ended and a newer one wrote the order. Nothing it did was committed. */
    @ExceptionHandler(StaleFenceException.class)
    ResponseEntity<Map<String, Object>> stale(StaleFenceException e) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error", "stale", "presentedFence", e.presentedFence(),
                "currentFence", e.currentFence()));
    }

    /** Bad input: ours above, or an argument fence-guard refused (it says what is wrong, before any I/O). */
    @ExceptionHandler(IllegalArgumentException.class)
    ResponseEntity<Map<String, Object>> invalid(IllegalArgumentException e) {
        return ResponseEntity.status(HttpStatus.BAD_REQUEST).body(Map.of("error", "invalid request", "message", e.getMessage()));
    }

    /** The value itself is left out of the message: it can be long, and it is the client's own anyway. */
    private static void requireName(String what, String value) {
        if (!NAME.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " must be 1 to 64 letters, digits, '-' or '_' (was " + value.length()
                    + " characters)");
        }
    }

    @ExceptionHandler(LockNotAcquiredException.class)
    ResponseEntity<Map<String, Object>> busy(LockNotAcquiredException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("error", "order is being paid by another worker"));
    }
}
