package dev.fenceguard.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import jakarta.persistence.EntityManager;
import jakarta.persistence.OptimisticLockException;
import jakarta.persistence.RollbackException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@code @Version} and the fence on one entity: every fenced write raises the version, so an instance
 * loaded before it fails its optimistic check rather than overwrite the fenced row; and a stale fence is
 * refused whatever the version. Both checks hold; neither replaces the other.
 */
class FenceAndVersionTest {

    private static final JpaTestSupport DB = new JpaTestSupport("jpaver", List.of(Invoice.DDL), Invoice.class);
    private static final FencedEntity<Invoice> INVOICES = FencedEntity.builder(Invoice.class).withMetrics(LockMetrics.none()).build();
    private static final AtomicLong IDS = new AtomicLong();

    @AfterAll
    static void close() {
        DB.close();
    }

    private static long newInvoice() {
        long id = IDS.incrementAndGet();
        DB.inTransaction(em -> {
            em.persist(new Invoice(id, 100));
            return null;
        });
        return id;
    }

    private static String row(long id) {
        return DB.one("SELECT amount, fence, version FROM invoices WHERE id = " + id);
    }

    @Test
    void everyFencedWriteRaisesTheVersion() {
        long id = newInvoice();
        assertThat(row(id)).isEqualTo("100|0|0");
        FencedEntityWriter<Invoice> w = INVOICES.on(DB.emf);
        w.update(id, FenceToken.of(3), Map.of("amount", 150));
        assertThat(row(id)).isEqualTo("150|3|1");
        w.claim(id, FenceToken.of(4));
        w.upsert(id, FenceToken.of(4), Map.of("amount", 175));
        assertThat(row(id)).isEqualTo("175|4|3");
        w.update(id, FenceToken.of(2), Map.of("amount", 1));
        assertThat(row(id)).as("a stale write changes nothing, the version neither").isEqualTo("175|4|3");
        long fresh = IDS.incrementAndGet();
        w.upsert(fresh, FenceToken.of(1), Map.of("amount", 5));
        assertThat(row(fresh)).as("an upsert that inserts starts the version where Hibernate does").isEqualTo("5|1|0");
    }

    @Test
    void anInstanceLoadedBeforeAFencedWriteFailsItsOptimisticCheck() {
        long id = newInvoice();
        try (EntityManager zombie = DB.emf.createEntityManager()) {
            zombie.getTransaction().begin();
            Invoice stale = zombie.find(Invoice.class, id);
            assertThat(INVOICES.on(DB.emf).update(id, FenceToken.of(7), Map.of("amount", 200)).isApplied()).isTrue();
            stale.amount = 999; // an ordinary, unfenced save of what it read before the fenced write
            assertThatThrownBy(() -> zombie.getTransaction().commit()).isInstanceOf(RollbackException.class)
                    .hasCauseInstanceOf(OptimisticLockException.class);
        }
        assertThat(row(id)).isEqualTo("200|7|1");
    }

    @Test
    void aStaleFenceIsRefusedWhateverTheVersion() {
        long id = newInvoice();
        try (EntityManager zombie = DB.emf.createEntityManager()) {
            zombie.getTransaction().begin();
            Invoice seen = zombie.find(Invoice.class, id);
            assertThat(INVOICES.on(DB.emf).claim(id, FenceToken.of(7)).isApplied()).isTrue();
            // The zombie's fenced write goes by the fence only: its instance's version plays no part. Refused,
            // the instance is refreshed all the same (it shows the row as it is), so nothing of it is flushed.
            assertThat(INVOICES.on(zombie).update(id, FenceToken.of(5), Map.of("amount", 1))).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                    s -> assertThat(s.currentFence()).isEqualTo(7));
            assertThat(seen.version).isEqualTo(1L);
            assertThat(seen.fence).isEqualTo(7L);
            zombie.getTransaction().commit();
        }
        assertThat(row(id)).isEqualTo("100|7|1");
    }

    @Test
    void theSameEntityManagersInstanceIsRefreshedAndSavesOnTopOfTheFencedWrite() {
        long id = newInvoice();
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Invoice inv = em.find(Invoice.class, id);
            assertThat(INVOICES.on(em).update(id, FenceToken.of(7), Map.of("amount", 200)).isApplied()).isTrue();
            assertThat(inv.version).isEqualTo(1L);
            assertThat(inv.fence).isEqualTo(7L);
            inv.amount = inv.amount + 1;
            em.getTransaction().commit();
        }
        assertThat(row(id)).isEqualTo("201|7|2");
    }
}
