package dev.fenceguard.examples;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.ArrayList;
import java.util.Map;

/**
 * An in-process payment gateway that honours idempotency keys the way real providers do: the first
 * request with a key charges the card and remembers the result; a repeat with the same key returns the
 * remembered charge without charging again.
 */
final class FakeGateway {

    private final Map<String, String> byKey = new LinkedHashMap<>();
    private final List<String> charges = new ArrayList<>();
    private int requests;

    /** Charges {@code amountCents} unless {@code idempotencyKey} was seen; returns the charge id. */
    synchronized String charge(String idempotencyKey, long amountCents) {
        requests++;
        return byKey.computeIfAbsent(idempotencyKey, k -> {
            String id = "ch_" + (charges.size() + 1);
            charges.add(id + " (" + amountCents + " cents, key " + k + ")");
            return id;
        });
    }

    /** How many charge requests reached the gateway, repeats included. */
    synchronized int requests() {
        return requests;
    }

    /** Every charge actually made. */
    synchronized List<String> charges() {
        return List.copyOf(charges);
    }
}
