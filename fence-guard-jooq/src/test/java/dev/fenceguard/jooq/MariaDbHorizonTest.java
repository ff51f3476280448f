package dev.fenceguard.jooq;

import static dev.fenceguard.jooq.HorizonFixture.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.EnumConverter;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.AfterAll;
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

    abstract static class Cases extends HorizonCases {
        final MariaTestSupport db;

        Cases(MariaTestSupport db) {
            this.db = db;
        }

        @Override
        HorizonStore fixture() throws Exception {
            return new MariaHorizonFixture(db, "items", Duration.ofMinutes(5));
        }

        @Test
        void anUpsertWhoseValueOnlyJooqBindsIsJudgedTheSameWay() throws Exception {
            // A converter makes the statement run through jOOQ, which hands back no insert id: the session's is read.
            Field<Body> body = DSL.field(DSL.name("body"), SQLDataType.VARCHAR.asConvertedDataType(new EnumConverter<>(String.class, Body.class)));
            FencedWriter w = f.items().on(db.ds);
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
                FencedWriter w = f.items().on(c);
                assertThat(((Stale) w.upsert(1L, FenceToken.of(h), body("zombie"))).reason()).isEqualTo(Stale.Reason.NEWER_FENCE);
                assertBelowHorizon(w.upsert(2L, FenceToken.of(h), body("zombie")), h, h);
            }
            assertThat(f.rows()).containsExactly("1|" + (h + MINUTE) + "|true");
        }

        @Test
        void warmUpOfATableWithAHorizonHasTheServerCheckItsStatementsAndWritesNothing() throws Exception {
            f.tombstone(1L, 5);
            f.items().on(db.ds).warmUp(body(""));
            assertThat(f.rows()).as("nothing written, the tombstone untouched").containsExactly("1|5|true");
            FencedTable missing = FencedTable.builder(db.db.name(), "no_such_items", "id", "fence_token").withKeyType(Long.class)
                    .withTombstoneColumn("fence_deleted").withHorizon(HorizonFixture.H).build();
            assertThatThrownBy(() -> missing.on(db.ds).warmUp(body(""))).isInstanceOf(dev.fenceguard.core.FenceGuardException.class);
        }

        @Test
        void aBatchLargerThanOneDeleteStatementsKeysIsRemovedInChunks() throws Exception {
            long old = f.tickAgo(HorizonFixture.H.multipliedBy(3));
            db.exec("INSERT INTO " + f.table() + " (id, fence_token, fence_deleted) SELECT seq, " + old + ", TRUE FROM seq_1_to_2500");
            PurgeResult r = f.items().on(db.ds).purge(Purge.ofDefaults().withBatchSize(3000));
            assertThat(r).as("1024 + 1024 + 452 keys, one batch").isEqualTo(new PurgeResult(2500, 1, true, Optional.empty()));
            assertThat(f.rows()).isEmpty();
        }

    }
}
