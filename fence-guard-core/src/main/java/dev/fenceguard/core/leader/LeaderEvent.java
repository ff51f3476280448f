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
                // Type tests, not pattern switches: a pattern switch's first run generates a class with the JDK's
                // class-file API (several ms, inside the first election); see docs/warm-up.md.
                .subscribe("log", event -> {
                    if (event instanceof Elected e) {
                        log.info("leadership '{}': elected, term {}", name, e.term().term().value());
                    } else if (event instanceof Revoked r) {
                        log.info("leadership '{}': term {} ended: {}", name, r.term().term().value(), r.why());
                    } else {
                        throw unknown(event);
                    }
                })
                .subscribeIf(metrics != LeaderMetrics.none(), "LeaderMetrics", event -> {
                    if (event instanceof Elected e) {
                        metrics.elected(name, e.term().term().value());
                    } else if (event instanceof Revoked r) {
                        metrics.termEnded(name, r.why() != LeadershipListener.Revocation.RESIGNED
                                && r.why() != LeadershipListener.Revocation.STOPPED);
                    } else {
                        throw unknown(event);
                    }
                })
                .subscribe("LeadershipListener", event -> {
                    if (event instanceof Elected e) {
                        listener.elected(e.term());
                    } else if (event instanceof Revoked r) {
                        listener.revoked(r.term(), r.why());
                    } else {
                        throw unknown(event);
                    }
                })
                .build();
    }

    private static IllegalStateException unknown(LeaderEvent event) {
        return new IllegalStateException("unknown leader event " + event);
    }
}
