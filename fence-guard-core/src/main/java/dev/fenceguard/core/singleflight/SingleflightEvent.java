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
                // Type tests, not a pattern switch: a pattern switch's first run generates a class with the JDK's
                // class-file API (several ms, inside a user's first flight); see docs/warm-up.md.
                .subscribeIf(metrics != SingleflightMetrics.none(), "SingleflightMetrics", event -> {
                    if (event instanceof Led l) {
                        metrics.led(store, l.outcome());
                    } else if (event instanceof Waited w) {
                        metrics.waited(store, w.outcome(), w.waited());
                    } else if (event instanceof Shared) {
                        metrics.shared(store);
                    } else if (event instanceof Retained) {
                        metrics.retained(store);
                    } else {
                        throw new IllegalStateException("unknown singleflight event " + event);
                    }
                })
                .build();
    }
}
