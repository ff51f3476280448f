package dev.fenceguard.examples.docs;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** An observation registry for the samples' tests that records the name of every observation it stops. */
final class StoppedObservations {

    final ObservationRegistry registry = ObservationRegistry.create();
    final List<String> names = new CopyOnWriteArrayList<>();

    StoppedObservations() {
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStop(Observation.Context context) {
                names.add(context.getName());
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
    }
}
