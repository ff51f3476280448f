package dev.fenceguard.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one event stream of a component (the lock client, a singleflight, an idempotency store, a leader
 * election): the component publishes each event once, and its meters, logs, listener and internal
 * consumers subscribe, so that a new sink touches nothing but the subscriber list (the shape of
 * Resilience4j's {@code EventPublisher}).
 *
 * <p>Subscribers are fixed when the component is built and called in the order they were added, on the
 * publishing thread, one after the other: an event reaches every subscriber before {@link #publish}
 * returns, so what one publisher publishes in order (the events of one lease, say) every subscriber sees
 * in that order. A subscriber that throws is logged and skipped; the ones after it still hear the event.
 * A subscriber may name the event types it wants; it is then not called for others, and an event type no
 * subscriber wants ({@link #hasSubscribers(Class)} false) need not even be built: the meters are the only
 * subscribers of the most frequent lock events, so without meters those cost nothing.
 * Immutable and thread-safe; publishing takes no lock and allocates nothing but the event.
 *
 * @param <E> the component's event type, a sealed hierarchy of records
 */
public final class EventPublisher<E> {

    private static final Logger log = LoggerFactory.getLogger(EventPublisher.class);

    private final String component;
    private final List<Subscriber<E>> subscribers;
    /**
     * The subscribers of each event class, in order, worked out on its first event: an array rather than a
     * list, and no type test per subscriber, because this runs for every event of every lease.
     */
    private final ClassValue<Subscriber<E>[]> byType = new ClassValue<>() {
        @Override
        @SuppressWarnings("unchecked")
        protected Subscriber<E>[] computeValue(Class<?> type) {
            return subscribers.stream().filter(s -> s.wants(type)).toArray(Subscriber[]::new);
        }
    };

    /** One subscriber, its name for the log line when it throws, and the event types it wants (empty: all). */
    private record Subscriber<E>(String name, Consumer<? super E> consumer, Set<Class<? extends E>> types) {
        boolean wants(Class<?> type) {
            return types.isEmpty() || types.stream().anyMatch(t -> t.isAssignableFrom(type));
        }
    }

    private EventPublisher(String component, List<Subscriber<E>> subscribers) {
        this.component = component;
        this.subscribers = List.copyOf(subscribers);
    }

    /** A builder for the stream of {@code component} (named in log lines, e.g. {@code lock client}). */
    public static <E> Builder<E> builder(String component) {
        return new Builder<>(Objects.requireNonNull(component, "component"));
    }

    /** Whether anyone listens to anything. */
    public boolean hasSubscribers() {
        return !subscribers.isEmpty();
    }

    /** Whether anyone listens to events of {@code type}: a publisher may skip building one nobody would hear. */
    public boolean hasSubscribers(Class<? extends E> type) {
        return byType.get(type).length != 0;
    }

    /**
     * Hands {@code event} to every subscriber that wants its type, in order; one that throws is logged and the
     * rest still run.
     */
    public void publish(E event) {
        for (Subscriber<E> s : byType.get(event.getClass())) {
            try {
                s.consumer().accept(event);
            } catch (RuntimeException | AssertionError | LinkageError e) { // the subscribers after it must still hear it
                threw(s.name(), component, event.getClass().getSimpleName(), e);
            }
        }
    }

    /**
     * Hands one event to the one sink of a component that has no stream of its own (a fenced write's
     * rejection, reported at one place to {@code LockMetrics}) with the same rule: a sink that throws is logged
     * and ignored, and never fails the operation that reported the event.
     */
    public static void deliver(String subscriber, String component, String event, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | AssertionError | LinkageError e) {
            threw(subscriber, component, event, e);
        }
    }

    private static void threw(String subscriber, String component, String event, Throwable e) {
        // The event's name only: its fields may hold an error whose message quotes stored data.
        log.warn("{} of the {} threw on {}; ignored", subscriber, component, event, e);
    }

    /** The subscribers of one stream, in order. Not thread-safe. */
    public static final class Builder<E> {
        private final String component;
        private final List<Subscriber<E>> subscribers = new ArrayList<>();

        private Builder(String component) {
            this.component = component;
        }

        /** Adds {@code consumer} for every event, named {@code name} in the log line if it throws. */
        public Builder<E> subscribe(String name, Consumer<? super E> consumer) {
            return subscribe(name, consumer, Set.of());
        }

        /** Adds {@code consumer} for the events of {@code types} (and their subtypes) only; empty: all. */
        public Builder<E> subscribe(String name, Consumer<? super E> consumer, Set<Class<? extends E>> types) {
            subscribers.add(new Subscriber<>(Objects.requireNonNull(name, "name"), Objects.requireNonNull(consumer, "consumer"),
                    Set.copyOf(types)));
            return this;
        }

        /** Adds {@code consumer} if {@code present}: a sink that records nothing is not called at all. */
        public Builder<E> subscribeIf(boolean present, String name, Consumer<? super E> consumer) {
            return present ? subscribe(name, consumer) : this;
        }

        /** {@link #subscribe(String, Consumer, Set)} if {@code present}. */
        public Builder<E> subscribeIf(boolean present, String name, Consumer<? super E> consumer, Set<Class<? extends E>> types) {
            return present ? subscribe(name, consumer, types) : this;
        }

        /** The stream. */
        public EventPublisher<E> build() {
            return new EventPublisher<>(component, subscribers);
        }
    }
}
