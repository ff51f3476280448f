package dev.fenceguard.examples.docs;

import static dev.fenceguard.examples.docs.PurgeFixtures.ORDERS;
import static dev.fenceguard.examples.docs.PurgeFixtures.db;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.testkit.FencePurgeProperties;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** The sample of {@link FencePurgeProperties}' Javadoc: a fenced table's purge against the horizon rule, on the embedded PostgreSQL. */
// dev/fenceguard/testkit/FencePurgeProperties.java: subclass (begin)
class OrderPurgeProperties extends FencePurgeProperties {
    protected Duration horizon() { return Duration.ofHours(1); }                  // as ORDERS was built
    protected Instant storeClock() { return db.clock(); }                          // SELECT clock_timestamp(): the store's clock
    protected WriteOutcome write(String key, FenceToken f, Pause p) {
        return ORDERS.on(db.dataSource()).upsert(key, f, Assignments.of("status", "paid"));
    }
    protected WriteOutcome delete(String key, FenceToken f, Pause p) { return ORDERS.on(db.dataSource()).delete(key, f); }
    protected WriteOutcome claim(String key, FenceToken f, Pause p) { return ORDERS.on(db.dataSource()).claim(key, f); }
    protected void purge(Pause p) { db.purgeToTheEnd(ORDERS); }                   // resumed from its cursor until complete
    protected Optional<FenceRecord> record(String key) { return db.fenceRecord(key); }
    protected void plant(String key, FenceRecord r) { db.insertDirectly(key, r); } // an old record, as a write long ago left it
}
// dev/fenceguard/testkit/FencePurgeProperties.java: subclass (end)
