package dev.fenceguard.examples.boot;

import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.spring.LockNotAcquiredException;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders/{id}/pay}, {@code GET /orders/{id}}. */
@RestController
public class PaymentController {

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
        return payments.pay(id, worker, amountCents, null); // the lease argument is supplied by @FencedLock
    }

    @GetMapping("/orders/{id}")
    public Map<String, Object> order(@PathVariable("id") String id) {
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

    @ExceptionHandler(LockNotAcquiredException.class)
    ResponseEntity<Map<String, Object>> busy(LockNotAcquiredException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("error", "order is being paid by another worker"));
    }
}
