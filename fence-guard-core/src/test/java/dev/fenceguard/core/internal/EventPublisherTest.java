package dev.fenceguard.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EventPublisherTest {

    private sealed interface Event {}

    private record Ping(int n) implements Event {}

    private record Pong(int n) implements Event {}

    @Test
    void subscribersHearEveryEventInTheOrderTheyWereAdded() {
        List<String> heard = new ArrayList<>();
        EventPublisher<Ping> events = EventPublisher.<Ping>builder("test stream")
                .subscribe("first", p -> heard.add("first " + p.n()))
                .subscribe("second", p -> heard.add("second " + p.n()))
                .build();
        events.publish(new Ping(1));
        events.publish(new Ping(2));
        assertThat(heard).containsExactly("first 1", "second 1", "first 2", "second 2");
    }

    @Test
    void aSubscriberThatThrowsIsLoggedAndTheOthersStillHearTheEvent() {
        List<String> heard = new ArrayList<>();
        EventPublisher<Ping> events = EventPublisher.<Ping>builder("test stream")
                .subscribe("before", p -> heard.add("before " + p.n()))
                .subscribe("thrower", p -> {
                    throw new IllegalStateException("subscriber bug " + p.n());
                })
                .subscribe("asserting", p -> {
                    throw new AssertionError("a test's assertion in a subscriber");
                })
                .subscribe("after", p -> heard.add("after " + p.n()))
                .build();
        String log = CapturedLog.of(() -> {
            events.publish(new Ping(1));
            events.publish(new Ping(2));
        });
        assertThat(heard).containsExactly("before 1", "after 1", "before 2", "after 2");
        assertThat(log).contains("thrower of the test stream threw on Ping; ignored", "subscriber bug 1", "subscriber bug 2")
                .contains("asserting of the test stream threw on Ping; ignored");
    }

    @Test
    void aSubscriberThatNamesItsTypesHearsOnlyThoseAndATypeNobodyWantsNeedNotBeBuilt() {
        List<String> heard = new ArrayList<>();
        EventPublisher<Event> events = EventPublisher.<Event>builder("test stream")
                .subscribe("pings", e -> heard.add("pings " + e), Set.of(Ping.class))
                .subscribe("all", e -> heard.add("all " + e))
                .build();
        events.publish(new Ping(1));
        events.publish(new Pong(2));
        assertThat(heard).containsExactly("pings Ping[n=1]", "all Ping[n=1]", "all Pong[n=2]");
        EventPublisher<Event> pingsOnly = EventPublisher.<Event>builder("test stream")
                .subscribe("pings", e -> heard.add("only " + e), Set.of(Ping.class)).build();
        assertThat(pingsOnly.hasSubscribers(Ping.class)).isTrue();
        assertThat(pingsOnly.hasSubscribers(Pong.class)).isFalse();
        pingsOnly.publish(new Pong(3));
        assertThat(heard).doesNotContain("only Pong[n=3]");
    }

    @Test
    void aSinkThatRecordsNothingIsNotSubscribed() {
        List<String> heard = new ArrayList<>();
        EventPublisher<Ping> none = EventPublisher.<Ping>builder("test stream")
                .subscribeIf(false, "absent", p -> heard.add("absent")).build();
        none.publish(new Ping(1));
        assertThat(none.hasSubscribers()).isFalse();
        assertThat(heard).isEmpty();
        assertThat(EventPublisher.<Ping>builder("test stream").subscribeIf(true, "present", p -> {}).build().hasSubscribers()).isTrue();
    }
}
