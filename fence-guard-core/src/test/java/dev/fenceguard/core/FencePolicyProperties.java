package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.NoSuchElementException;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;

class FencePolicyProperties {

    @Property
    void sameOrNewerAdmitsExactlyEqualOrGreater(@ForAll @LongRange(min = 1, max = 1000) long presented,
            @ForAll @LongRange(min = 0, max = 1000) long stored) {
        assertThat(FencePolicy.SAME_OR_NEWER.admits(presented, stored)).isEqualTo(presented >= stored);
    }

    @Property
    void strictlyNewerAdmitsExactlyGreater(@ForAll @LongRange(min = 1, max = 1000) long presented,
            @ForAll @LongRange(min = 0, max = 1000) long stored) {
        assertThat(FencePolicy.STRICTLY_NEWER.admits(presented, stored)).isEqualTo(presented > stored);
    }

    @Property
    void aNeverFencedResourceAdmitsAnyToken(@ForAll @LongRange(min = 1, max = FenceToken.MAX_VALUE) long presented) {
        for (FencePolicy policy : FencePolicy.values()) {
            assertThat(policy.admits(presented, 0)).isTrue();
        }
    }

    @Example
    void theSameLeaseMayWriteTwiceOnlyUnderSameOrNewer() {
        assertThat(FencePolicy.SAME_OR_NEWER.admits(7, 7)).isTrue();
        assertThat(FencePolicy.STRICTLY_NEWER.admits(7, 7)).isFalse();
        assertThat(FencePolicy.SAME_OR_NEWER.operator()).isEqualTo(">=");
        assertThat(FencePolicy.STRICTLY_NEWER.operator()).isEqualTo(">");
    }

    @Example
    void invalidFencesAreRejected() {
        assertThatThrownBy(() -> FencePolicy.SAME_OR_NEWER.admits(0, 0)).hasMessage("presented fence must be at least 1, was 0");
        assertThatThrownBy(() -> FencePolicy.SAME_OR_NEWER.admits(1, -1)).hasMessage("stored fence must not be negative, was -1");
    }

    @Example
    void outcomesThrowOnlyWhenNotApplied() {
        WriteOutcome applied = new WriteOutcome.Applied("orders[id=1]", 5);
        assertThat(applied.orThrow()).isSameAs(applied);
        assertThat(applied.isApplied()).isTrue();

        WriteOutcome stale = new WriteOutcome.Stale("orders[id=1]", 4, 5, FencePolicy.SAME_OR_NEWER);
        assertThat(stale.isApplied()).isFalse();
        assertThatThrownBy(stale::orThrow).isInstanceOfSatisfying(StaleFenceException.class, e -> {
            assertThat(e.presentedFence()).isEqualTo(4);
            assertThat(e.currentFence()).isEqualTo(5);
            assertThat(e.resource()).isEqualTo("orders[id=1]");
            assertThat(e.code()).isEqualTo(ErrorCode.STALE_FENCE);
            assertThat(e.getMessage()).isEqualTo("STALE_FENCE (key 'orders[id=1]'): stale write rejected: "
                    + "presented fence 4 but the resource holds fence 5 (SAME_OR_NEWER)");
        });

        assertThatThrownBy(new WriteOutcome.NotFound("orders[id=2]")::orThrow)
                .isInstanceOf(NoSuchElementException.class).hasMessageContaining("orders[id=2]");
    }
}
