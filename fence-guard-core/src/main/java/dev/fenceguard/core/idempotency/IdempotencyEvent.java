package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.internal.EventPublisher;

/**
 * What an {@link IdempotencyStore} publishes once on its stream, for its subscribers (the meters) to hear.
 */
sealed interface IdempotencyEvent {

    /** A call on {@code backend} was answered {@code answer} without running its work. */
    record Answered(String backend, IdempotencyMetrics.Answer answer) implements IdempotencyEvent {}

    /** The stream of a store: {@code metrics} subscribes unless it is {@link IdempotencyMetrics#none()}. */
    static EventPublisher<IdempotencyEvent> publisher(IdempotencyMetrics metrics) {
        return EventPublisher.<IdempotencyEvent>builder("idempotency store")
                // A type test, not a pattern switch: a pattern switch's first run generates a class with the JDK's
                // class-file API (several ms, inside a user's first answered call); see docs/warm-up.md.
                .subscribeIf(metrics != IdempotencyMetrics.none(), "IdempotencyMetrics", event -> {
                    if (event instanceof Answered a) {
                        metrics.answered(a.backend(), a.answer());
                    } else {
                        throw new IllegalStateException("unknown idempotency event " + event);
                    }
                })
                .build();
    }
}
