package dev.fenceguard.core.leader;

import dev.fenceguard.core.internal.EventPublisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link LeaderElection} publishes once on its stream, for the log, the meters and the
 * {@link LeadershipListener} to hear, in that order. The election publishes its events one at a time, in
 * term order (see {@link LeadershipListener}): every subscriber hears {@code Elected(t)} before
 * {@code Revoked(t)}, and that before the next term's {@code Elected}.
 */
sealed interface LeaderEvent {

    /** The term this event is about. */
    Leadership term();

    /** This process now leads for {@code term}. */
    record Elected(Leadership term) implements LeaderEvent {}

    /** This process no longer leads for {@code term}. */
    record Revoked(Leadership term, LeadershipListener.Revocation why) implements LeaderEvent {}

    /** The stream of the election of {@code name}. */
    static EventPublisher<LeaderEvent> publisher(String name, LeaderMetrics metrics, LeadershipListener listener) {
        Logger log = LoggerFactory.getLogger(LeaderElection.class);
        return EventPublisher.<LeaderEvent>builder("leader election '" + name + "'")
                .subscribe("log", event -> {
                    switch (event) {
                        case Elected e -> log.info("leadership '{}': elected, term {}", name, e.term().term().value());
                        case Revoked r -> log.info("leadership '{}': term {} ended: {}", name, r.term().term().value(), r.why());
                    }
                })
                .subscribeIf(metrics != LeaderMetrics.none(), "LeaderMetrics", event -> {
                    switch (event) {
                        case Elected e -> metrics.elected(name, e.term().term().value());
                        case Revoked r -> metrics.termEnded(name, r.why() != LeadershipListener.Revocation.RESIGNED
                                && r.why() != LeadershipListener.Revocation.STOPPED);
                    }
                })
                .subscribe("LeadershipListener", event -> {
                    switch (event) {
                        case Elected e -> listener.elected(e.term());
                        case Revoked r -> listener.revoked(r.term(), r.why());
                    }
                })
                .build();
    }
}
