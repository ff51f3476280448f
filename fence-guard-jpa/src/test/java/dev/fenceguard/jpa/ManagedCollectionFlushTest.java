package dev.fenceguard.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import jakarta.persistence.EntityManager;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Second reader's check of #26 item 1 with an entity that has an element collection: a pending change
 * to the collection of the written row's managed instance must neither reach the database by a plain
 * flush (ahead of the fenced statement or at commit) nor be silently dropped: the docs promise that
 * pending changes a fenced statement cannot carry are refused before any statement.
 */
class ManagedCollectionFlushTest {

    private static final JpaTestSupport DB = new JpaTestSupport("jpacoll", List.of(Badge.DDL, Badge.TAGS_DDL, Pennant.DDL,
            Pennant.TAGS_DDL), Badge.class, Pennant.class);
    private static final FencedEntity<Badge> BADGES = FencedEntity.builder(Badge.class).withMetrics(LockMetrics.none()).build();
    private static final FencedEntity<Pennant> PENNANTS = FencedEntity.builder(Pennant.class).withMetrics(LockMetrics.none()).build();

    @AfterAll
    static void close() {
        DB.close();
    }

    private static List<String> plainWrites(String table, List<String> ran) {
        return ran.stream().filter(s -> (s.startsWith("update " + table + " set") || s.startsWith("insert into " + table))
                && !s.contains("coalesce(")).toList();
    }

    /**
     * With @Version, a zombie that changed an attribute and its collection: its fenced update must be
     * Stale with no plain UPDATE, or refused before any statement. Seen on 0e02888: FenceGuardException
     * INTERNAL ("fenced update failed: org.hibernate.HibernateException", Hibernate's "Immutable
     * collection was modified" from the AUTO flush, because ManagedRow made the owner, and so its
     * collections, read-only).
     */
    @Test
    void aVersionedZombieThatAlsoChangedItsCollectionIsStaleOrRefusedNotAnInternalError() {
        String id = "b-" + UUID.randomUUID();
        DB.exec("INSERT INTO badges (id, status, fence_token) VALUES ('" + id + "', 'new', 10)");
        try (EntityManager zombie = DB.emf.createEntityManager()) {
            zombie.getTransaction().begin();
            Badge mine = zombie.find(Badge.class, id);
            mine.status = "zombie";
            mine.tags.add("zombie-tag"); // initializes the collection, then a pending change to it
            assertThat(BADGES.on(DB.emf).update(id, FenceToken.of(20), Map.of("status", "successor")).isApplied()).isTrue();

            int before = DB.sql.size();
            try {
                WriteOutcome out = BADGES.on(zombie).update(id, FenceToken.of(10), Map.of("status", "written"));
                List<String> ran = List.copyOf(DB.sql.subList(before, DB.sql.size()));
                assertThat(plainWrites("badges", ran)).as("plain flushes among %s", ran).isEmpty();
                assertThat(out).isInstanceOfSatisfying(WriteOutcome.Stale.class, s -> assertThat(s.currentFence()).isEqualTo(20));
                zombie.getTransaction().commit();
            } catch (IllegalStateException refused) {
                // The other acceptable answer (docs/jpa.md): a pending change no fenced statement can carry is refused before any statement.
                assertThat(DB.sql.subList(before, DB.sql.size())).as("refused before any statement").isEmpty();
                zombie.getTransaction().rollback();
            }
        }
        assertThat(DB.one("SELECT status, fence_token FROM badges WHERE id = '" + id + "'")).isEqualTo("successor|20");
        assertThat(DB.one("SELECT count(*) FROM badge_tags WHERE badge_id = '" + id + "'")).as("the zombie's tag").isEqualTo("0");
    }

    /**
     * Without @Version, a holder's pending collection change: written, or refused before any statement;
     * never silently dropped, never an INTERNAL error. Seen on 0e02888: FenceGuardException INTERNAL, as
     * above (on a002f50 the AUTO flush wrote the tag and the fenced update was applied).
     */
    @Test
    void aHoldersPendingCollectionChangeIsNotSilentlyDropped() {
        String id = "p-" + UUID.randomUUID();
        DB.exec("INSERT INTO pennants (id, status, fence_token) VALUES ('" + id + "', 'new', 10)");
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Pennant mine = em.find(Pennant.class, id);
            mine.tags.add("mine");
            int before = DB.sql.size();
            try {
                WriteOutcome out = PENNANTS.on(em).update(id, FenceToken.of(20), Map.of("status", "written"));
                assertThat(out.isApplied()).isTrue();
                em.getTransaction().commit();
                assertThat(DB.one("SELECT count(*) FROM pennant_tags WHERE pennant_id = '" + id + "'"))
                        .as("the holder's pending tag was neither refused nor written; statements %s", DB.sql.subList(before, DB.sql.size()))
                        .isEqualTo("1");
            } catch (IllegalStateException refused) {
                assertThat(DB.sql.subList(before, DB.sql.size())).as("refused before any statement").isEmpty();
                em.getTransaction().rollback();
            }
        }
    }

    /** Without @Version, a zombie's collection change must not reach the database, even when the fenced statement's AUTO flush runs. */
    @Test
    void aZombiesCollectionChangeDoesNotReachTheDatabaseWhenAnotherInstanceForcesTheAutoFlush() {
        String id = "p-" + UUID.randomUUID();
        String other = "p-" + UUID.randomUUID();
        DB.exec("INSERT INTO pennants (id, status, fence_token) VALUES ('" + id + "', 'new', 10), ('" + other + "', 'new', 10)");
        try (EntityManager zombie = DB.emf.createEntityManager()) {
            zombie.getTransaction().begin();
            Pennant mine = zombie.find(Pennant.class, id);
            mine.tags.add("zombie-tag");
            zombie.find(Pennant.class, other).status = "touched"; // another row's ordinary change: flushed as usual
            assertThat(PENNANTS.on(DB.emf).update(id, FenceToken.of(20), Map.of("status", "successor")).isApplied()).isTrue();
            try {
                WriteOutcome out = PENNANTS.on(zombie).update(id, FenceToken.of(10), Map.of("status", "written"));
                assertThat(out).isInstanceOf(WriteOutcome.Stale.class);
                zombie.getTransaction().commit();
            } catch (IllegalStateException refused) {
                zombie.getTransaction().rollback();
            }
        }
        assertThat(DB.one("SELECT count(*) FROM pennant_tags WHERE pennant_id = '" + id + "'")).as("the zombie's tag").isEqualTo("0");
    }
}
