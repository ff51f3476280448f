package dev.fenceguard.jooq;

import dev.fenceguard.core.Purge;
import static dev.fenceguard.jooq.HorizonFixture.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Purges interleaved with writes, deletes, claims and zombies holding old fences, one step at a time on a
 * table with a horizon: no write is applied below a fence its key has recorded, and after each purge no
 * tombstone below the purge horizon read before it is left.
 */
class PostgresPurgeProperties {

    private static PgTestSupport pg;

    @BeforeContainer
    static void setUp() {
        pg = new PgTestSupport("purgeprops");
    }

    @AfterContainer
    static void tearDown() {
        pg.close();
    }

    enum Kind { UPSERT, UPDATE, CLAIM, DELETE, PURGE }

    /** One step: an operation on a key with the fence at {@code level} of the run's ladder. */
    record Step(Kind kind, long key, int level) {}

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Step> step = net.jqwik.api.Combinators.combine(Arbitraries.of(Kind.class), Arbitraries.longs().between(1, 4),
                Arbitraries.integers().between(0, 6)).as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(25);
    }

    @Property(tries = 40)
    void noWriteIsAppliedBelowARecordedFenceAndPurgesLeaveNoOldTombstone(@ForAll("steps") List<Step> steps) throws Exception {
        HorizonFixture f = new HorizonFixture(pg, "prop_items", Duration.ofMinutes(5));
        long p = f.tickAgo(HorizonFixture.H.plus(Duration.ofMinutes(5)));
        long h = f.horizon();
        // zombies far below the purge horizon, one just below it, one inside the margin, and live leases above the horizon
        long[] ladder = {p - 20 * MINUTE, p - 10 * MINUTE, p - 1, p + MINUTE, h + MINUTE, h + 2 * MINUTE, h + 3 * MINUTE};
        Map<Long, Long> recorded = new HashMap<>();
        FencedWriter w = f.items.on(pg.ds);
        for (Step s : steps) {
            FenceToken fence = FenceToken.of(ladder[s.level()]);
            WriteOutcome out = switch (s.kind()) {
                case UPSERT -> w.upsert(s.key(), fence, Assignments.of("body", "v"));
                case UPDATE -> w.update(s.key(), fence, Assignments.of("body", "u"));
                case CLAIM -> w.claim(s.key(), fence);
                case DELETE -> w.delete(s.key(), fence);
                case PURGE -> null;
            };
            if (out == null) {
                long before = f.tickAgo(HorizonFixture.H.plus(Duration.ofMinutes(5)));
                w.purge(Purge.ofDefaults().withBatchSize(2));
                assertThat(pg.one("SELECT count(*) FROM " + f.table + " WHERE fence_deleted AND fence_token < " + before))
                        .as("tombstones below the purge horizon after a purge").isEqualTo("0");
                continue;
            }
            long seen = recorded.getOrDefault(s.key(), 0L);
            if (out instanceof WriteOutcome.Applied) {
                assertThat(fence.value()).as("%s applied below the recorded fence %d", s, seen).isGreaterThanOrEqualTo(seen);
                recorded.put(s.key(), fence.value());
            } else if (out instanceof WriteOutcome.NotFound && s.kind() == Kind.CLAIM) {
                assertThat(fence.value()).as("%s recorded below the recorded fence %d", s, seen).isGreaterThanOrEqualTo(seen);
                recorded.put(s.key(), fence.value());
            }
        }
        for (String row : f.rows()) {
            String[] cols = row.split("\\|");
            assertThat(Long.parseLong(cols[1])).as("row %s holds the highest fence recorded for its key", row)
                    .isEqualTo(recorded.get(Long.parseLong(cols[0])));
        }
    }
}
