package dev.fenceguard.jooq;

import static dev.fenceguard.jooq.HorizonFixture.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Stale;
import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Rule 1 and the purge of docs/fence-lifecycle.md, one writer at a time: the cases every SQL database runs
 * ({@link PostgresHorizonTest}, {@link MariaDbHorizonTest}) on the table of a {@link HorizonStore}.
 */
abstract class HorizonCases {

    HorizonStore f;

    /** A fresh table for each test. */
    abstract HorizonStore fixture() throws Exception;

    @BeforeEach
    void table() throws Exception {
        f = fixture();
    }

    static Assignments body(String text) {
        return Assignments.of("body", text);
    }

    static void assertBelowHorizon(WriteOutcome outcome, long fence, long horizonBefore) {
        assertThat(outcome).isInstanceOf(Stale.class);
        Stale s = (Stale) outcome;
        assertThat(s.reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
        assertThat(s.presentedFence()).isEqualTo(fence);
        assertThat(s.currentFence()).as("the horizon, read after the one the test read").isGreaterThanOrEqualTo(horizonBefore);
        assertThatThrownBy(outcome::orThrow).isInstanceOf(StaleFenceException.class)
                .hasMessageContaining("at or below the horizon").hasMessageContaining("BELOW_HORIZON")
                .satisfies(e -> assertThat(((StaleFenceException) e).reason()).isEqualTo(Stale.Reason.BELOW_HORIZON));
    }

    @Test
    void creatingAnAbsentKeyAtOrBelowTheHorizonIsStaleAndAboveItIsApplied() throws Exception {
        FencedWriter w = f.items().on(f.ds());
        long h = f.horizon();
        for (long fence : new long[] {h, h - 1, h - 10 * MINUTE, 1}) {
            FenceToken old = FenceToken.of(fence);
            assertBelowHorizon(w.upsert(10L, old, body("zombie")), fence, h);
            assertBelowHorizon(w.claim(11L, old), fence, h);
            assertBelowHorizon(w.delete(12L, old), fence, h);
        }
        assertThat(f.rows()).as("nothing created").isEmpty();
        assertThat(f.purges().stale.get()).as("each counted as a stale write").isEqualTo(12);

        FenceToken young = FenceToken.of(h + MINUTE); // a minute above the horizon read just before
        assertThat(w.upsert(10L, young, body("new"))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(w.upsert(10L, young, body("new"))).as("again, the row left as it was").isInstanceOf(WriteOutcome.Applied.class);
        assertThat(w.claim(11L, young)).isInstanceOf(WriteOutcome.NotFound.class);
        assertThat(w.delete(12L, young)).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(f.rows()).containsExactly("10|" + young.value() + "|false", "11|" + young.value() + "|true",
                "12|" + young.value() + "|true");
    }

    @Test
    void writesThatFindARecordFollowTheWriteRuleAlone() throws Exception {
        FencedWriter w = f.items().on(f.ds());
        f.live(1L, 0);
        f.tombstone(2L, 5);
        // every fence here is far below the horizon: the records decide
        assertThat(w.update(1L, FenceToken.of(3), body("a"))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(w.upsert(1L, FenceToken.of(4), body("b"))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(w.upsert(1L, FenceToken.of(4), body("b"))).as("again, the row left as it was").isInstanceOf(WriteOutcome.Applied.class);
        assertThat(w.claim(1L, FenceToken.of(5))).isInstanceOf(WriteOutcome.Applied.class);
        Stale older = (Stale) w.upsert(1L, FenceToken.of(2), body("zombie"));
        assertThat(older.reason()).isEqualTo(Stale.Reason.NEWER_FENCE);
        assertThat(older.currentFence()).isEqualTo(5);
        assertThat(w.delete(1L, FenceToken.of(6))).isInstanceOf(WriteOutcome.Applied.class);
        // a tombstone is a record: an old fence it admits revives it, one it refuses is plain Stale
        assertThat(((Stale) w.upsert(2L, FenceToken.of(4), body("zombie"))).reason()).isEqualTo(Stale.Reason.NEWER_FENCE);
        assertThat(w.claim(2L, FenceToken.of(6))).isInstanceOf(WriteOutcome.NotFound.class);
        assertThat(w.delete(2L, FenceToken.of(7))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(w.upsert(2L, FenceToken.of(8), body("back"))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(f.rows()).containsExactly("1|6|true", "2|8|false");
        assertThat(f.one("SELECT body FROM " + f.table() + " WHERE id = 2")).isEqualTo("back");
    }

    @Test
    void insideTheCallersTransactionARefusalLeavesItUsable() throws Exception {
        long h = f.horizon();
        try (Connection c = f.ds().getConnection()) {
            c.setAutoCommit(false);
            FencedWriter w = f.items().on(c);
            assertBelowHorizon(w.upsert(20L, FenceToken.of(h - 1), body("zombie")), h - 1, h);
            assertBelowHorizon(w.delete(21L, FenceToken.of(h - 1)), h - 1, h);
            assertThat(w.upsert(20L, FenceToken.of(h + MINUTE), body("new"))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(w.claim(22L, FenceToken.of(h + MINUTE))).isInstanceOf(WriteOutcome.NotFound.class);
            assertThat(f.rows()).as("nothing committed yet").isEmpty();
            c.commit();
        }
        assertThat(f.rows()).containsExactly("20|" + (h + MINUTE) + "|false", "22|" + (h + MINUTE) + "|true");
        try (Connection c = f.ds().getConnection()) {
            c.setAutoCommit(false);
            assertThat(f.items().on(DSL.using(c, f.dialect())).delete(23L, FenceToken.of(h + MINUTE)))
                    .isInstanceOf(WriteOutcome.Applied.class);
            c.rollback();
        }
        assertThat(f.rows()).as("the caller's rollback undoes it").hasSize(2);
    }

    @Test
    void aTableWithoutAHorizonStillCreatesKeysWithAnyFence() throws Exception {
        FencedTable plain = FencedTable.builder(f.schema(), "items", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").build();
        assertThat(plain.on(f.ds()).upsert(30L, FenceToken.of(1), body("old"))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(plain.on(f.ds()).delete(31L, FenceToken.of(1))).isInstanceOf(WriteOutcome.Applied.class);
        assertThatThrownBy(() -> plain.on(f.ds()).purge(Purge.ofDefaults())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs a horizon");
    }

    @Test
    void purgeRemovesExactlyTheTombstonesBelowTheHorizonAndTheMargin() throws Exception {
        long p = f.tickAgo(HorizonFixture.H.plus(f.items().clockMargin()));
        long h = f.horizon();
        f.tombstone(1L, 1);                 // removable
        f.tombstone(2L, p - MINUTE);        // removable
        f.tombstone(3L, p + MINUTE);        // within the margin: below the horizon, kept
        f.tombstone(4L, h + MINUTE);        // young: kept
        f.live(5L, 0);                      // live rows are never purged, whatever their fence
        f.live(6L, p - MINUTE);
        f.tombstone(7L, p - 2 * MINUTE);    // removable

        PurgeResult r = f.items().on(f.ds()).purge(Purge.ofDefaults());
        assertThat(r).isEqualTo(new PurgeResult(3, 1, true, Optional.empty()));
        assertThat(f.rows()).containsExactly("3|" + (p + MINUTE) + "|true", "4|" + (h + MINUTE) + "|true", "5|0|false",
                "6|" + (p - MINUTE) + "|false");
        assertThat(f.purges().removed(f.storeTag(), "tombstone")).isEqualTo(3);

        // the zombies those tombstones kept out are still out: no record, and the horizon refuses them
        FencedWriter w = f.items().on(f.ds());
        assertBelowHorizon(w.upsert(2L, FenceToken.of(p - MINUTE), body("zombie")), p - MINUTE, h);
        assertBelowHorizon(w.claim(7L, FenceToken.of(p - MINUTE)), p - MINUTE, h);
        assertBelowHorizon(w.upsert(1L, FenceToken.of(1), body("zombie")), 1, h);
        assertThat(f.items().on(f.ds()).purge(Purge.ofDefaults()).removed()).as("a second purge finds nothing").isZero();
        assertThat(f.rows()).hasSize(4);
    }

    @Test
    void purgeStopsAtItsTimeBoundAndResumesAfterTheKeyItReturns() throws Exception {
        long old = f.tickAgo(HorizonFixture.H.multipliedBy(3));
        for (long id = 1; id <= 25; id++) {
            f.tombstone(id, old);
            f.live(100 + id, old);
        }
        Purge oneBatch = Purge.ofDefaults().withBatchSize(10).withMaxDuration(Duration.ofNanos(1));
        PurgeResult first = f.items().on(f.ds()).purge(oneBatch);
        assertThat(first).isEqualTo(new PurgeResult(10, 1, false, Optional.of(10L)));
        PurgeResult second = f.items().on(f.ds()).purge(oneBatch.withStartAfter(first.resumeAfter().orElseThrow()));
        assertThat(second).isEqualTo(new PurgeResult(10, 1, false, Optional.of(20L)));
        PurgeResult third = f.items().on(f.ds()).purge(oneBatch.withStartAfter(20));   // an Integer key: converted
        assertThat(third).isEqualTo(new PurgeResult(5, 1, true, Optional.empty()));
        assertThat(f.one("SELECT count(*) FROM " + f.table() + " WHERE fence_deleted")).isEqualTo("0");
        assertThat(f.one("SELECT count(*) FROM " + f.table())).isEqualTo("25");
        assertThat(f.purges().removed(f.storeTag(), "tombstone")).isEqualTo(25);

        for (long id = 1; id <= 20; id++) {
            f.tombstone(id, old);
        }
        PurgeResult all = f.items().on(f.ds()).purge(Purge.ofDefaults().withBatchSize(10));
        assertThat(all).as("batches of 10 until one finds fewer").isEqualTo(new PurgeResult(20, 3, true, Optional.empty()));
    }

    @Test
    void purgeInTheCallersTransactionIsUndoneByItsRollback() throws Exception {
        f.tombstone(1L, 1);
        try (Connection c = f.ds().getConnection()) {
            c.setAutoCommit(false);
            assertThat(f.items().on(c).purge(Purge.ofDefaults()).removed()).isEqualTo(1);
            c.rollback();
        }
        assertThat(f.rows()).containsExactly("1|1|true");
    }
}
