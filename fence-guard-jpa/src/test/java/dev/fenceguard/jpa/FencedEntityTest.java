package dev.fenceguard.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import jakarta.persistence.EntityManager;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Fenced update, upsert, claim and tombstone delete of JPA entities on real PostgreSQL through Hibernate. */
class FencedEntityTest {

    private static final JpaTestSupport DB = new JpaTestSupport("jpa", List.of(Shipment.DDL, Ticket.DDL, Invoice.DDL,
            Ledger.DDL, Slate.DDL), Shipment.class, Ticket.class, Invoice.class, Ledger.class, Slate.class);
    private static final FencedEntity<Shipment> SHIPMENTS = FencedEntity.builder(Shipment.class).withMetrics(LockMetrics.none()).build();
    private static final FencedEntityWriter<Shipment> OWN = SHIPMENTS.on(DB.emf);

    @AfterAll
    static void close() {
        DB.close();
    }

    private static String newShipment(String status) {
        String id = "s-" + UUID.randomUUID();
        DB.exec("INSERT INTO shipments (id, status) VALUES ('" + id + "', '" + status + "')");
        return id;
    }

    private static String row(String id) {
        return DB.one("SELECT status, items, fence_token, deleted FROM shipments WHERE id = '" + id + "'");
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    @Test
    void updateSetsDataAndFenceInOneStatement() {
        String id = newShipment("new");
        assertThat(OWN.update(id, f(5), Map.of("status", "packed", "items", 3))).isEqualTo(new WriteOutcome.Applied("Shipment[id=" + id + "]", 5));
        assertThat(row(id)).isEqualTo("packed|3|5|null");
    }

    @Test
    void olderFenceIsStaleAndChangesNothingWhileTheSameFenceWritesAgain() {
        String id = newShipment("new");
        OWN.update(id, f(5), Map.of("status", "a"));
        assertThat(OWN.update(id, f(5), Map.of("status", "b")).isApplied()).isTrue();
        WriteOutcome stale = OWN.update(id, f(4), Map.of("status", "zombie"));
        assertThat(stale).isInstanceOfSatisfying(WriteOutcome.Stale.class, s -> {
            assertThat(s.currentFence()).isEqualTo(5);
            assertThat(s.presentedFence()).isEqualTo(4);
        });
        assertThat(row(id)).isEqualTo("b|0|5|null");
    }

    @Test
    void updateOfAMissingRowOrATombstoneIsNotFound() {
        assertThat(OWN.update("never-" + UUID.randomUUID(), f(3), Map.of("status", "x"))).isInstanceOf(WriteOutcome.NotFound.class);
        String id = newShipment("new");
        OWN.delete(id, f(3));
        assertThat(OWN.update(id, f(4), Map.of("status", "x"))).isInstanceOf(WriteOutcome.NotFound.class);
        assertThat(row(id)).isEqualTo("new|0|3|t");
    }

    @Test
    void deleteKeepsATombstoneSoAStaleUpsertCannotBringTheRowBack() {
        String id = newShipment("new");
        assertThat(OWN.delete(id, f(5)).isApplied()).isTrue();
        assertThat(row(id)).isEqualTo("new|0|5|t");
        assertThat(OWN.upsert(id, f(4), Map.of("status", "zombie"))).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(5));
        assertThat(OWN.delete(id, f(4))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(row(id)).isEqualTo("new|0|5|t");
        assertThat(OWN.delete(id, f(6)).isApplied()).as("a newer delete raises the tombstone's fence").isTrue();
        assertThat(OWN.upsert(id, f(7), Map.of("status", "back")).isApplied()).isTrue();
        assertThat(row(id)).isEqualTo("back|0|7|f");
    }

    @Test
    void deleteOfAnIdThatNeverExistedRecordsATombstone() {
        String id = "never-" + UUID.randomUUID();
        assertThat(OWN.delete(id, f(5)).isApplied()).isTrue();
        assertThat(row(id)).isEqualTo("null|0|5|t");
        assertThat(OWN.upsert(id, f(4), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(row(id)).isEqualTo("null|0|5|t");
    }

    @Test
    void upsertCreatesAndReplacesUnderTheRule() {
        String id = "up-" + UUID.randomUUID();
        assertThat(OWN.upsert(id, f(2), Map.of("status", "created")).isApplied()).isTrue();
        assertThat(row(id)).isEqualTo("created|0|2|f");
        assertThat(OWN.upsert(id, f(3), Map.of("status", "replaced", "items", 9)).isApplied()).isTrue();
        assertThat(OWN.upsert(id, f(1), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(row(id)).isEqualTo("replaced|9|3|f");
    }

    @Test
    void saveWritesTheEntitysStateUnderTheRule() {
        String id = "save-" + UUID.randomUUID();
        Shipment s = new Shipment(id, "saved");
        s.items = 2;
        assertThat(OWN.save(s, f(3)).isApplied()).as("a save of a new id inserts").isTrue();
        assertThat(row(id)).isEqualTo("saved|2|3|f");
        s.status = "saved again";
        assertThat(OWN.save(s, f(3)).isApplied()).isTrue();
        s.status = "zombie";
        assertThat(OWN.save(s, f(2))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(row(id)).isEqualTo("saved again|2|3|f");
        assertThat(s.fenceToken).as("the instance saved is not changed").isNull();
        assertThatThrownBy(() -> OWN.save(new Shipment(null, "x"), f(4))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the Shipment to save has no id; a fenced save needs an assigned id");
    }

    @Test
    void claimRecordsTheFenceWithoutTouchingTheData() {
        String id = newShipment("new");
        assertThat(OWN.claim(id, f(8)).isApplied()).isTrue();
        assertThat(row(id)).isEqualTo("new|0|8|null");
        assertThat(OWN.update(id, f(7), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(OWN.claim(id, f(7))).isInstanceOf(WriteOutcome.Stale.class);

        String absent = "claim-" + UUID.randomUUID();
        assertThat(OWN.claim(absent, f(4))).as("a claim of an id without a row").isInstanceOf(WriteOutcome.NotFound.class);
        assertThat(row(absent)).as("leaves a tombstone holding the fence").isEqualTo("null|0|4|t");
        assertThat(OWN.claim(absent, f(6))).isInstanceOf(WriteOutcome.NotFound.class);
        assertThat(row(absent)).as("a claim of a tombstone raises its fence").isEqualTo("null|0|6|t");
        assertThat(OWN.claim(absent, f(5))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(OWN.upsert(absent, f(5), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
    }

    @Test
    void textFencesAndStrictlyNewerHoldToo() {
        FencedEntityWriter<Ticket> tickets = FencedEntity.builder(Ticket.class).withMetrics(LockMetrics.none()).build().on(DB.emf);
        assertThat(FencedEntity.of(Ticket.class).policy()).isEqualTo(FencePolicy.STRICTLY_NEWER);
        DB.exec("INSERT INTO tickets (id, note) VALUES (1, 'open')");
        assertThat(tickets.update(1L, f(5), Map.of("note", "first")).isApplied()).isTrue();
        assertThat(tickets.update(1L, f(5), Map.of("note", "again"))).as("once per lease").isInstanceOfSatisfying(WriteOutcome.Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(5));
        assertThat(DB.one("SELECT note, fence, gone FROM tickets WHERE id = 1")).isEqualTo("first|000000000000005|f");
    }

    @Test
    void aTombstoneTheTableRefusesIsAnInvalidArgumentThatQuotesNoRowAndPlaceholdersFixIt() {
        FencedEntityWriter<Ticket> tickets = FencedEntity.of(Ticket.class).on(DB.emf);
        // tickets.note is NOT NULL without a default, so the tombstone row of an id never seen is refused.
        assertThatThrownBy(() -> tickets.delete(77L, f(3))).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("fenced delete failed", "SQLSTATE 23502", "Ticket[id=77]")
                    .doesNotContain("000000000000003").doesNotContain("insert into");
        });
        assertThat(tickets.delete(77L, f(3), Map.of("note", "deleted")).isApplied()).isTrue();
        assertThat(DB.one("SELECT note, fence, gone FROM tickets WHERE id = 77")).isEqualTo("deleted|000000000000003|t");
    }

    @Test
    void anAppliedWriteIsOneStatementAndOnlyARejectionTakesASecond() {
        String id = newShipment("new");
        int before = DB.statements.get();
        assertThat(OWN.update(id, f(5), Map.of("status", "a")).isApplied()).isTrue();
        assertThat(DB.statements.get() - before).isEqualTo(1);
        before = DB.statements.get();
        assertThat(OWN.update(id, f(4), Map.of("status", "b"))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(DB.statements.get() - before).isEqualTo(2);
        before = DB.statements.get();
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(SHIPMENTS.on(em).upsert(id, f(6), Map.of("status", "c")).isApplied()).isTrue();
            em.getTransaction().commit();
        }
        assertThat(DB.statements.get() - before).as("no managed instance, so nothing to refresh").isEqualTo(1);
    }

    @Test
    void badInputFailsBeforeAnyStatement() {
        String id = newShipment("new");
        int before = DB.statements.get();
        Map<String, Object> nullStatus = new HashMap<>();
        nullStatus.put("items", null);
        // Each of these is refused by the checks; the row proves no statement ran.
        assertThatThrownBy(() -> OWN.update(42L, f(1), Map.of("status", "x"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("id 42 is a java.lang.Long, but the id of Shipment is a java.lang.String");
        assertThatThrownBy(() -> OWN.update("", f(1), Map.of("status", "x"))).hasMessage("id must not be empty");
        assertThatThrownBy(() -> OWN.update(id, f(1), Map.of("colour", "x"))).hasMessageContaining("'colour' is not an attribute of Shipment");
        assertThatThrownBy(() -> OWN.update(id, f(1), Map.of("fenceToken", 9L))).hasMessageContaining("must not set the id, fence, tombstone");
        assertThatThrownBy(() -> OWN.update(id, f(1), Map.of("deleted", true))).hasMessageContaining("must not set the id, fence, tombstone");
        assertThatThrownBy(() -> OWN.update(id, f(1), Map.of("id", "other"))).hasMessageContaining("must not set the id, fence, tombstone");
        assertThatThrownBy(() -> OWN.update(id, f(1), Map.of("items", "three"))).hasMessage(
                "value for Shipment.items must be a int, was a java.lang.String");
        assertThatThrownBy(() -> OWN.update(id, f(1), nullStatus)).hasMessage("value for Shipment.items must be a int, was null");
        assertThatThrownBy(() -> OWN.update(id, f(1), Map.of())).hasMessage("values must name at least one attribute to set");
        assertThatThrownBy(() -> OWN.upsert(id, null, Map.of("status", "x"))).isInstanceOf(NullPointerException.class).hasMessage("fence");
        assertThat(row(id)).isEqualTo("new|0|null|null");

        FencedEntityWriter<Invoice> invoices = FencedEntity.of(Invoice.class).on(DB.emf);
        assertThatThrownBy(() -> invoices.delete(1L, f(1))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("fenced delete of Invoice needs a tombstone attribute");
        assertThatThrownBy(() -> invoices.update(1L, f(1), Map.of("version", 3L))).hasMessageContaining("@Version");
        try (EntityManager em = DB.emf.createEntityManager()) {
            assertThatThrownBy(() -> SHIPMENTS.on(em).update(id, f(1), Map.of("status", "x"))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("fenced update needs a transaction");
        }
        assertThat(DB.statements.get()).as("statements sent for all the calls above").isEqualTo(before);
        assertThat(row(id)).isEqualTo("new|0|null|null");
    }

    @Test
    void definitionsTheMetamodelContradictsAreRefusedWhenBound() {
        assertThatThrownBy(() -> FencedEntity.of(String.class)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("java.lang.String has no fence attribute: mark one with @Fence or name it with withFenceAttribute(..)");
        assertThatThrownBy(() -> FencedEntity.builder(Shipment.class).withFenceAttribute("fence token"))
                .hasMessageContaining("must be a Java identifier");
        assertThatThrownBy(() -> FencedEntity.builder(String.class).withFenceAttribute("x").build().on(DB.emf))
                .hasMessage("java.lang.String is not an entity of this persistence unit");
        assertThatThrownBy(() -> FencedEntity.builder(Shipment.class).withFenceAttribute("items").build().on(DB.emf))
                .hasMessageContaining("fence attribute Shipment.items must be a Long, long or String");
        assertThatThrownBy(() -> FencedEntity.builder(Shipment.class).withFenceAttribute("weight").build().on(DB.emf))
                .hasMessageContaining("fence attribute 'weight' is not an attribute of Shipment");
        assertThatThrownBy(() -> FencedEntity.builder(Shipment.class).withTombstoneAttribute("status").build().on(DB.emf))
                .hasMessageContaining("tombstone attribute Shipment.status must be a Boolean or boolean");
        assertThatThrownBy(() -> FencedEntity.builder(Shipment.class).withFenceAttribute("id").build().on(DB.emf))
                .hasMessageContaining("it is the id");
        int before = DB.statements.get();
        assertThatThrownBy(() -> FencedEntity.of(Ledger.class).on(DB.emf)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence attribute Ledger.fence is written by Hibernate's flush of every changed Ledger")
                .hasMessageContaining("@Column(updatable = false)");
        assertThatThrownBy(() -> FencedEntity.of(Slate.class).on(DB.emf)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tombstone attribute Slate.gone is written by Hibernate's flush of every changed Slate")
                .hasMessageContaining("@Column(updatable = false)");
        assertThat(DB.statements.get()).as("refused before any statement").isEqualTo(before);
    }

    @Test
    void anotherEntityManagersPlainFlushCannotBringADeletedRowBackNorLowerItsFence() {
        String id = newShipment("new");
        try (EntityManager other = DB.emf.createEntityManager()) {
            other.getTransaction().begin();
            Shipment stale = other.find(Shipment.class, id); // loaded before the fenced delete; Shipment has no @Version
            assertThat(OWN.delete(id, f(9)).isApplied()).isTrue();
            stale.status = "unfenced"; // an ordinary save: it writes the data, but neither the fence nor the tombstone
            other.getTransaction().commit();
        }
        assertThat(row(id)).isEqualTo("unfenced|0|9|t");
        assertThat(OWN.upsert(id, f(8), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
    }

    @Test
    void aManagedInstanceIsRefreshedSoItsFlushKeepsTheFencedRow() {
        String id = newShipment("new");
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Shipment loaded = em.find(Shipment.class, id);
            assertThat(SHIPMENTS.on(em).update(id, f(9), Map.of("status", "fenced")).isApplied()).isTrue();
            assertThat(loaded.status).isEqualTo("fenced");
            assertThat(loaded.fenceToken).isEqualTo(9L);
            loaded.items = 4; // a later change through the entity is flushed with the fenced values, not over them
            em.getTransaction().commit();
        }
        assertThat(row(id)).isEqualTo("fenced|4|9|null");
    }

    @Test
    void pendingChangesOfTheManagedInstanceAreWrittenByTheFencedStatement() {
        String id = newShipment("new");
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Shipment loaded = em.find(Shipment.class, id);
            loaded.items = 7; // pending, not flushed yet
            assertThat(SHIPMENTS.on(em).update(id, f(2), Map.of("status", "fenced")).isApplied()).isTrue();
            assertThat(loaded.items).as("the fenced statement carried it; the refresh kept it").isEqualTo(7);
            em.getTransaction().commit();
        }
        assertThat(row(id)).isEqualTo("fenced|7|2|null");
    }

    @Test
    void aManagedInstanceIsDetachedAfterADeleteSoItsFlushCannotReviveTheRow() {
        String id = newShipment("new");
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Shipment loaded = em.find(Shipment.class, id);
            assertThat(SHIPMENTS.on(em).delete(id, f(9)).isApplied()).isTrue();
            assertThat(em.contains(loaded)).isFalse();
            loaded.status = "zombie";
            loaded.deleted = false;
            em.getTransaction().commit();
        }
        assertThat(row(id)).isEqualTo("new|0|9|t");
    }

    @Test
    void aRejectionIsCountedOnceUnderTheJpaResourceType() {
        List<String> rejected = new java.util.concurrent.CopyOnWriteArrayList<>();
        LockMetrics counting = new LockMetrics() {
            @Override
            public void acquireAttempt(String backend, LockMetrics.AcquireOutcome outcome, java.time.Duration latency) {}

            @Override
            public void held(String backend, java.time.Duration holdTime) {}

            @Override
            public void renewFailed(String backend) {}

            @Override
            public void highFence(String backend) {}

            @Override
            public void staleWriteRejected(String resourceType) {
                rejected.add(resourceType);
            }
        };
        FencedEntityWriter<Shipment> w = FencedEntity.builder(Shipment.class).withMetrics(counting).build().on(DB.emf);
        String id = newShipment("new");
        w.update(id, f(5), Map.of("status", "a"));
        w.update(id, f(4), Map.of("status", "b"));
        w.update("never-" + UUID.randomUUID(), f(4), Map.of("status", "c"));
        assertThat(rejected).containsExactly("jpa");
    }

    @Test
    void writesInTheCallersTransactionRollBackWithIt() {
        String id = newShipment("new");
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            assertThat(SHIPMENTS.on(em).update(id, f(3), Map.of("status", "uncommitted")).isApplied()).isTrue();
            em.getTransaction().rollback();
        }
        assertThat(row(id)).isEqualTo("new|0|null|null");
    }
}
