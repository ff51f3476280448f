package dev.fenceguard.examples.docs;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.reactor.ReactiveSingleflight;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * The sample of {@code ReactiveSingleflight}'s Javadoc: a class of its own, because its {@code ResultCodec}
 * is the singleflight one, while {@link ReactorSamples} uses the idempotency store's.
 */
final class ReactorSingleflightSamples {

    private ReactorSingleflightSamples() {}

    /** A stand-in for a reactive report builder, and a count of its calls. */
    static final class Reports {
        final AtomicInteger calls = new AtomicInteger();

        Mono<String> build(String month) {
            return Mono.fromSupplier(() -> "report " + month + " #" + calls.incrementAndGet());
        }
    }

    static Mono<String> singleflight(LockClient lockClient, FlightStore flightStore, Reports reports) {
        // dev/fenceguard/reactor/ReactiveSingleflight.java: run (begin)
        ReactiveSingleflight flights = ReactiveSingleflight.of(Singleflight.builder(lockClient, flightStore).build());
        Mono<String> report = flights.run("report:2026-11", Duration.ofSeconds(20), ResultCodec.utf8(),
                lease -> reports.build("2026-11"));                           // a Mono<String>, run by the leader only
        // dev/fenceguard/reactor/ReactiveSingleflight.java: run (end)
        return report;
    }
}
