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
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.EnumConverter;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Rule 1 and the purge of docs/fence-lifecycle.md on MariaDB, one writer at a time: the cases of
 * {@link PostgresHorizonTest}, through MariaDB Connector/J and MySQL Connector/J (found rows), and through
 * each with changed rows ({@code useAffectedRows=true}: a write that leaves a row as it was counts 0, and MySQL
 * Connector/J then hands out no insert id).
 */
class MariaDbHorizonTest {

    private static final MariaTestSupport MARIA = new MariaTestSupport("horizon");
    private static final MariaTestSupport CONNECTOR_J = new MariaTestSupport("horizon_cj", "mysql", "");
    private static final MariaTestSupport CHANGED_ROWS = new MariaTestSupport("horizon_chg", "mariadb", "useAffectedRows=true");
    private static final MariaTestSupport CONNECTOR_J_CHANGED_ROWS = new MariaTestSupport("horizon_cjchg", "mysql", "useAffectedRows=true");

    @AfterAll
    static void dropDatabases() throws Exception {
        MARIA.close();
        CONNECTOR_J.close();
        CHANGED_ROWS.close();
        CONNECTOR_J_CHANGED_ROWS.close();
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MariaDbConnectorJFoundRows extends Cases {
        MariaDbConnectorJFoundRows() {
            super(MARIA);
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MySqlConnectorJFoundRows extends Cases {
        MySqlConnectorJFoundRows() {
            super(CONNECTOR_J);
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MariaDbConnectorJChangedRows extends Cases {
        MariaDbConnectorJChangedRows() {
            super(CHANGED_ROWS);
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class MySqlConnectorJChangedRows extends Cases {
        MySqlConnectorJChangedRows() {
            super(CONNECTOR_J_CHANGED_ROWS);
        }
    }

    enum Body { NEW, ZOMBIE }

    abstract static class Cases {
        final MariaTestSupport db;
        MariaHorizonFixture f;

        Cases(MariaTestSupport db) {
            this.db = db;
        }

        @BeforeEach
        void table() throws Exception {
            f = new MariaHorizonFixture(db, "items", Duration.ofMinutes(5));
        }

        private static Assignments body(String text) {
            return Assignments.of("body", text);
        }

        private static void assertBelowHorizon(WriteOutcome outcome, long fence, long horizonBefore) {
            assertThat(outcome).isInstanceOf(Stale.class);
            Stale s = (Stale) outcome;
            assertThat(s.reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
            assertThat(s.presentedFence()).isEqualTo(fence);
            assertThat(s.currentFence()).as("the horizon, read after the one the test read").isGreaterThanOrEqualTo(horizonBefore);
            assertThatThrownBy(outcome::orThrow).isInstanceOf(StaleFenceException.class)
                    .hasMessageContaining("at or below the horizon").hasMessageContaining("BELOW_HORIZON");
        }

        @Test
        void creatingAnAbsentKeyAtOrBelowTheHorizonIsStaleAndAboveItIsApplied() throws Exception {
            FencedWriter w = f.items.on(db.ds);
            long h = f.horizon();
            for (long fence : new long[] {h, h - 1, h - 10 * MINUTE, 1}) {
                FenceToken old = FenceToken.of(fence);
                assertBelowHorizon(w.upsert(10L, old, body("zombie")), fence, h);
                assertBelowHorizon(w.claim(11L, old), fence, h);
                assertBelowHorizon(w.delete(12L, old), fence, h);
            }
            assertThat(f.rows()).as("nothing created").isEmpty();
            assertThat(f.purges.stale.get()).as("each counted as a stale write").isEqualTo(12);

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
            FencedWriter w = f.items.on(db.ds);
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
            assertThat(db.one("SELECT body FROM " + f.table + " WHERE id = 2")).isEqualTo("back");
        }

        @Test
        void anUpsertWhoseValueOnlyJooqBindsIsJudgedTheSameWay() throws Exception {
            // A converter makes the statement run through jOOQ, which hands back no insert id: the session's is read.
            Field<Body> body = DSL.field(DSL.name("body"), SQLDataType.VARCHAR.asConvertedDataType(new EnumConverter<>(String.class, Body.class)));
            FencedWriter w = f.items.on(db.ds);
            long h = f.horizon();
            f.tombstone(2L, 5);
            assertBelowHorizon(w.upsert(1L, FenceToken.of(h - 1), Assignments.of(body, Body.ZOMBIE)), h - 1, h);
            assertThat(w.upsert(1L, FenceToken.of(h + MINUTE), Assignments.of(body, Body.NEW))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(w.upsert(1L, FenceToken.of(h + MINUTE), Assignments.of(body, Body.NEW))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(((Stale) w.upsert(1L, FenceToken.of(h), Assignments.of(body, Body.ZOMBIE))).reason()).isEqualTo(Stale.Reason.NEWER_FENCE);
            assertThat(((Stale) w.upsert(2L, FenceToken.of(4), Assignments.of(body, Body.ZOMBIE))).currentFence()).isEqualTo(5);
            assertThat(w.upsert(2L, FenceToken.of(6), Assignments.of(body, Body.NEW))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(f.rows()).containsExactly("1|" + (h + MINUTE) + "|false", "2|6|false");
        }

        @Test
        void aStaleUpsertLeftInTheSessionIsNotReadAsThisWritesAnswer() throws Exception {
            // One connection: a stale upsert leaves LAST_INSERT_ID() = its refusal; the next upsert (refused by the gate,
            // no record) must not take that leftover for its own answer.
            long h = f.horizon();
            f.tombstone(1L, h + MINUTE);
            try (Connection c = db.ds.getConnection()) {
                FencedWriter w = f.items.on(c);
                assertThat(((Stale) w.upsert(1L, FenceToken.of(h), body("zombie"))).reason()).isEqualTo(Stale.Reason.NEWER_FENCE);
                assertBelowHorizon(w.upsert(2L, FenceToken.of(h), body("zombie")), h, h);
            }
            assertThat(f.rows()).containsExactly("1|" + (h + MINUTE) + "|true");
        }

        @Test
        void insideTheCallersTransactionARefusalLeavesItUsable() throws Exception {
            long h = f.horizon();
            try (Connection c = db.ds.getConnection()) {
                c.setAutoCommit(false);
                FencedWriter w = f.items.on(c);
                assertBelowHorizon(w.upsert(20L, FenceToken.of(h - 1), body("zombie")), h - 1, h);
                assertBelowHorizon(w.delete(21L, FenceToken.of(h - 1)), h - 1, h);
                assertThat(w.upsert(20L, FenceToken.of(h + MINUTE), body("new"))).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(w.claim(22L, FenceToken.of(h + MINUTE))).isInstanceOf(WriteOutcome.NotFound.class);
                assertThat(f.rows()).as("nothing committed yet").isEmpty();
                c.commit();
            }
            assertThat(f.rows()).containsExactly("20|" + (h + MINUTE) + "|false", "22|" + (h + MINUTE) + "|true");
            try (Connection c = db.ds.getConnection()) {
                c.setAutoCommit(false);
                assertThat(f.items.on(DSL.using(c, SQLDialect.MARIADB)).delete(23L, FenceToken.of(h + MINUTE)))
                        .isInstanceOf(WriteOutcome.Applied.class);
                c.rollback();
            }
            assertThat(f.rows()).as("the caller's rollback undoes it").hasSize(2);
        }

        @Test
        void warmUpOfATableWithAHorizonHasTheServerCheckItsStatementsAndWritesNothing() throws Exception {
            f.tombstone(1L, 5);
            f.items.on(db.ds).warmUp(body(""));
            assertThat(f.rows()).as("nothing written, the tombstone untouched").containsExactly("1|5|true");
            FencedTable missing = FencedTable.builder(db.db.name(), "no_such_items", "id", "fence_token").withKeyType(Long.class)
                    .withTombstoneColumn("fence_deleted").withHorizon(HorizonFixture.H).build();
            assertThatThrownBy(() -> missing.on(db.ds).warmUp(body(""))).isInstanceOf(dev.fenceguard.core.FenceGuardException.class);
        }

        @Test
        void aTableWithoutAHorizonStillCreatesKeysWithAnyFence() throws Exception {
            FencedTable plain = FencedTable.builder(db.db.name(), "items", "id", "fence_token").withKeyType(Long.class)
                    .withTombstoneColumn("fence_deleted").build();
            assertThat(plain.on(db.ds).upsert(30L, FenceToken.of(1), body("old"))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(plain.on(db.ds).delete(31L, FenceToken.of(1))).isInstanceOf(WriteOutcome.Applied.class);
            assertThatThrownBy(() -> plain.on(db.ds).purge(Purge.ofDefaults())).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("needs a horizon");
        }

        @Test
        void purgeRemovesExactlyTheTombstonesBelowTheHorizonAndTheMargin() throws Exception {
            long p = f.tickAgo(HorizonFixture.H.plus(f.items.clockMargin()));
            long h = f.horizon();
            f.tombstone(1L, 1);                 // removable
            f.tombstone(2L, p - MINUTE);        // removable
            f.tombstone(3L, p + MINUTE);        // within the margin: below the horizon, kept
            f.tombstone(4L, h + MINUTE);        // young: kept
            f.live(5L, 0);                      // live rows are never purged, whatever their fence
            f.live(6L, p - MINUTE);
            f.tombstone(7L, p - 2 * MINUTE);    // removable

            PurgeResult r = f.items.on(db.ds).purge(Purge.ofDefaults());
            assertThat(r).isEqualTo(new PurgeResult(3, 1, true, Optional.empty()));
            assertThat(f.rows()).containsExactly("3|" + (p + MINUTE) + "|true", "4|" + (h + MINUTE) + "|true", "5|0|false",
                    "6|" + (p - MINUTE) + "|false");
            assertThat(f.purges.removed("mysql", "tombstone")).isEqualTo(3);

            // the zombies those tombstones kept out are still out: no record, and the horizon refuses them
            FencedWriter w = f.items.on(db.ds);
            assertBelowHorizon(w.upsert(2L, FenceToken.of(p - MINUTE), body("zombie")), p - MINUTE, h);
            assertBelowHorizon(w.claim(7L, FenceToken.of(p - MINUTE)), p - MINUTE, h);
            assertBelowHorizon(w.upsert(1L, FenceToken.of(1), body("zombie")), 1, h);
            assertThat(f.items.on(db.ds).purge(Purge.ofDefaults()).removed()).as("a second purge finds nothing").isZero();
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
            PurgeResult first = f.items.on(db.ds).purge(oneBatch);
            assertThat(first).isEqualTo(new PurgeResult(10, 1, false, Optional.of(10L)));
            PurgeResult second = f.items.on(db.ds).purge(oneBatch.withStartAfter(first.resumeAfter().orElseThrow()));
            assertThat(second).isEqualTo(new PurgeResult(10, 1, false, Optional.of(20L)));
            PurgeResult third = f.items.on(db.ds).purge(oneBatch.withStartAfter(20));   // an Integer key: converted
            assertThat(third).isEqualTo(new PurgeResult(5, 1, true, Optional.empty()));
            assertThat(db.one("SELECT count(*) FROM " + f.table + " WHERE fence_deleted")).isEqualTo("0");
            assertThat(db.one("SELECT count(*) FROM " + f.table)).isEqualTo("25");
            assertThat(f.purges.removed("mysql", "tombstone")).isEqualTo(25);

            for (long id = 1; id <= 20; id++) {
                f.tombstone(id, old);
            }
            PurgeResult all = f.items.on(db.ds).purge(Purge.ofDefaults().withBatchSize(10));
            assertThat(all).as("batches of 10 until one finds fewer").isEqualTo(new PurgeResult(20, 3, true, Optional.empty()));
        }

        @Test
        void aBatchLargerThanOneDeleteStatementsKeysIsRemovedInChunks() throws Exception {
            long old = f.tickAgo(HorizonFixture.H.multipliedBy(3));
            db.exec("INSERT INTO " + f.table + " (id, fence_token, fence_deleted) SELECT seq, " + old + ", TRUE FROM seq_1_to_2500");
            PurgeResult r = f.items.on(db.ds).purge(Purge.ofDefaults().withBatchSize(3000));
            assertThat(r).as("1024 + 1024 + 452 keys, one batch").isEqualTo(new PurgeResult(2500, 1, true, Optional.empty()));
            assertThat(f.rows()).isEmpty();
        }

        @Test
        void purgeInTheCallersTransactionIsUndoneByItsRollback() throws Exception {
            f.tombstone(1L, 1);
            try (Connection c = db.ds.getConnection()) {
                c.setAutoCommit(false);
                assertThat(f.items.on(c).purge(Purge.ofDefaults()).removed()).isEqualTo(1);
                c.rollback();
            }
            assertThat(f.rows()).containsExactly("1|1|true");
        }
    }
}
