package dev.fenceguard.examples.boot;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An in-process payment gateway that honours idempotency keys as real providers do: the first request
 * with a key charges the card; a repeat with the same key returns that charge without charging again.
 */
public class PaymentGateway {

    private final Map<String, String> byKey = new LinkedHashMap<>();
    private final List<String> charges = new ArrayList<>();

    /** Charges {@code amountCents} unless {@code idempotencyKey} was seen; returns the charge id. */
    public synchronized String charge(String idempotencyKey, long amountCents) {
        return byKey.computeIfAbsent(idempotencyKey, k -> {
            String id = "ch_" + (charges.size() + 1);
            charges.add(id);
            return id;
        });
    }

    /** Every charge actually made. */
    public synchronized List<String> charges() {
        return List.copyOf(charges);
    }
}
