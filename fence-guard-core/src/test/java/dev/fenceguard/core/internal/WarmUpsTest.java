package dev.fenceguard.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.LockId;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WarmUpsTest {

    /** A lock store of one key, as a warm-up sees it: it records each call, and grants what a real store would. */
    private static final class OneKey {
        final List<String> calls = new ArrayList<>();
        LockId holder;
        boolean grantEveryone;

        boolean acquire(LockId who, Duration ttl) {
            calls.add("acquire");
            if (holder == null || grantEveryone) {
                holder = who;
                return true;
            }
            return false;
        }

        boolean extend(LockId who, Duration ttl) {
            calls.add("extend");
            return who.equals(holder);
        }

        boolean lookup(LockId who, Duration ttl) {
            calls.add("lookup");
            return holder != null;
        }

        boolean release(LockId who, Duration ttl) {
            calls.add("release");
            boolean held = who.equals(holder);
            holder = held ? null : holder;
            return held;
        }

        boolean warmUp() {
            return WarmUps.everyLockPath(this::acquire, this::extend, this::lookup, this::release);
        }
    }

    @Test
    void everyLockPathRunsEachCallOfAStoreInOrderAndLeavesTheKeyFree() {
        OneKey store = new OneKey();

        assertThat(store.warmUp()).isTrue();

        assertThat(store.calls).containsExactly("acquire", "acquire", "extend", "lookup", "release");
        assertThat(store.holder).isNull();
    }

    @Test
    void everyLockPathRunsEveryCallEvenWhenOneAnswersOtherwise() {
        OneKey store = new OneKey();
        store.grantEveryone = true; // the refused acquisition is granted: extend and release then find another holder

        assertThat(store.warmUp()).isFalse();

        assertThat(store.calls).containsExactly("acquire", "acquire", "extend", "lookup", "release");
    }

    @Test
    void everyLockPathUsesOneHolderForItsLeaseAndAnotherForTheRefusal() {
        List<LockId> acquirers = new ArrayList<>();
        Set<LockId> leaseCalls = new HashSet<>();
        WarmUps.everyLockPath((who, ttl) -> acquirers.add(who) && acquirers.size() == 1,
                (who, ttl) -> leaseCalls.add(who), (who, ttl) -> true, (who, ttl) -> leaseCalls.add(who));

        assertThat(acquirers).hasSize(2).doesNotHaveDuplicates();
        assertThat(leaseCalls).containsExactly(acquirers.getFirst());
    }

    @Test
    void everyLockPathPassesOnWhatAStoreCallThrows() {
        IOException down = new IOException("connection refused");

        assertThatThrownBy(() -> WarmUps.everyLockPath((who, ttl) -> {
            throw down;
        }, (who, ttl) -> true, (who, ttl) -> true, (who, ttl) -> true)).isSameAs(down);
    }

    @Test
    void outcomesRunsTwiceWithoutComplaint() {
        // Once per fenced-write warm-up: idempotent, nothing kept, nothing thrown.
        WarmUps.outcomes();
        WarmUps.outcomes();
    }
}
