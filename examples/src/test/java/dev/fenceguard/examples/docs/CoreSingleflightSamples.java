package dev.fenceguard.examples.docs;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.singleflight.AsyncSingleflight;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** The samples in the Javadoc of fence-guard-core's singleflight package. */
final class CoreSingleflightSamples {

    private CoreSingleflightSamples() {}

    /** The singleflight samples, with the expensive work they share: it counts its runs. */
    static final class Reports {
        final AtomicInteger built = new AtomicInteger();

        String buildExpensiveReport() {
            built.incrementAndGet();
            return "report 2026-11: 42 orders";
        }

        CompletionStage<String> async(LockClient lockClient, FlightStore flightStore, Executor executor) {
            // dev/fenceguard/core/singleflight/AsyncSingleflight.java: async run (begin)
            AsyncSingleflight flights = Singleflight.builder(lockClient, flightStore).build().async();
            CompletionStage<String> report = flights.run("report:2026-11", Duration.ofSeconds(20), ResultCodec.utf8(),
                    lease -> CompletableFuture.supplyAsync(() -> buildExpensiveReport(), executor));
            // dev/fenceguard/core/singleflight/AsyncSingleflight.java: async run (end)
            return report;
        }

        String onPostgres(LockClient lockClient, DataSource dataSource) throws InterruptedException {
            // dev/fenceguard/core/singleflight/Singleflight.java: jdbc flight store (begin)
            FenceGuardJdbc jdbc = FenceGuardJdbc.builder(dataSource).build();   // PostgreSQL; close() at shutdown
            Singleflight flights = Singleflight.builder(lockClient, jdbc.flightStore())
                    .withMaxWait(Duration.ofSeconds(30))
                    .build();
            String report = flights.run("report:2026-11", Duration.ofSeconds(20), ResultCodec.utf8(),
                    lease -> buildExpensiveReport());
            // dev/fenceguard/core/singleflight/Singleflight.java: jdbc flight store (end)
            jdbc.close();
            return report;
        }
    }

    static ResultCodec<Instant> resultCodec() {
        // dev/fenceguard/core/singleflight/ResultCodec.java: instants (begin)
        ResultCodec<Instant> instants = ResultCodec.of(t -> t.toString().getBytes(StandardCharsets.UTF_8),
                b -> Instant.parse(new String(b, StandardCharsets.UTF_8)));
        // dev/fenceguard/core/singleflight/ResultCodec.java: instants (end)
        return instants;
    }
}
