package dev.fenceguard.core.singleflight;

import dev.fenceguard.core.internal.EventPublisher;
import java.time.Duration;

/**
 * What a {@link Singleflight} publishes once on its stream, for its subscribers (the meters) to hear. The
 * store's name is the subscribers' to know: one singleflight has one store.
 */
sealed interface SingleflightEvent {

    /** A caller joined a flight already in progress in this process. */
    record Shared() implements SingleflightEvent {}

    /** This process computed a flight; it ended with {@code outcome}. */
    record Led(SingleflightMetrics.LedOutcome outcome) implements SingleflightEvent {}

    /** This process waited {@code waited} for another process's flight; the wait ended with {@code outcome}. */
    record Waited(SingleflightMetrics.WaitOutcome outcome, Duration waited) implements SingleflightEvent {}

    /** A flight was answered by a retained result. */
    record Retained() implements SingleflightEvent {}

    /** The stream of a singleflight on {@code store}: {@code metrics} subscribes unless it is {@link SingleflightMetrics#none()}. */
    static EventPublisher<SingleflightEvent> publisher(String store, SingleflightMetrics metrics) {
        return EventPublisher.<SingleflightEvent>builder("singleflight on " + store)
                .subscribeIf(metrics != SingleflightMetrics.none(), "SingleflightMetrics", event -> {
                    switch (event) {
                        case Shared s -> metrics.shared(store);
                        case Led l -> metrics.led(store, l.outcome());
                        case Waited w -> metrics.waited(store, w.outcome(), w.waited());
                        case Retained r -> metrics.retained(store);
                    }
                })
                .build();
    }
}
