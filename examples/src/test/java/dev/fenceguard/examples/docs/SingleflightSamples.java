package dev.fenceguard.examples.docs;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * The sample of docs/singleflight.md. Its table goes to the {@code public} schema, as the document says,
 * so it runs on a PostgreSQL of its own (the testkit's embedded one).
 */
final class SingleflightSamples {

    private SingleflightSamples() {}

    /** A stand-in for a rates provider that counts its calls. */
    static final class RateProvider {
        final AtomicInteger calls = new AtomicInteger();

        String fetch() {
            calls.incrementAndGet();
            return "EUR/USD 1.0842";
        }
    }

    static String rates(LockBackend backend, DataSource dataSource, RateProvider rateProvider) throws Exception {
        // docs/singleflight.md: usage (begin)
        LockClient locks = LockClient.of(backend);                               // any lock backend
        FenceGuardMigrations.singleflightBuilder(dataSource).migrate();          // PostgreSQL: the flights table
        FenceGuardJdbc jdbc = FenceGuardJdbc.builder(dataSource).build();         // close() it at shutdown
        FlightStore store = jdbc.flightStore();
        // or fenceGuardRedis.flightStore(), fenceGuardFirestore.flightStore() (their modules' one entry),
        //    new InMemoryFlightStore() in unit tests
        Singleflight flights = Singleflight.builder(locks, store)
                .withMaxWait(Duration.ofSeconds(30))      // how long a waiter waits for another process's flight
                .withRetention(Duration.ofSeconds(10))    // how long a published result answers new callers
                .build();

        String rates = flights.run("rates:2026-11-23", Duration.ofSeconds(20), ResultCodec.utf8(),
                lease -> rateProvider.fetch());            // runs in at most one process at a time
        // non-blocking: flights.async().run(key, ttl, codec, lease -> stageOfTheWork)
        // docs/singleflight.md: usage (end)
        jdbc.close();
        return rates;
    }
}
