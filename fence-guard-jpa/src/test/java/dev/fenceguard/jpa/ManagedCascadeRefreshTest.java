package dev.fenceguard.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import jakarta.persistence.EntityManager;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Second reader's check of #26 item 1: docs/jpa.md says other instances, of other rows or entities,
 * are flushed by Hibernate as usual. The refresh of the written row's instance after the write cascades
 * (CascadeType.REFRESH, part of ALL) to its children, which Hibernate's AUTO flush before the bulk
 * statement did not write (their table is not the statement's): a holder's change to a child is lost.
 */
class ManagedCascadeRefreshTest {

    private static final JpaTestSupport DB = new JpaTestSupport("jpacasc", List.of(Hull.DDL, Hull.DECKS_DDL), Hull.class,
            Hull.Deck.class);
    private static final FencedEntity<Hull> HULLS = FencedEntity.builder(Hull.class).withMetrics(LockMetrics.none()).build();

    @AfterAll
    static void close() {
        DB.close();
    }

    @Test
    void aHoldersChangeToAChildEntityIsWrittenAtCommitAfterAFencedUpdateOfTheParent() {
        String id = "h-" + UUID.randomUUID();
        DB.exec("INSERT INTO hulls (id, status, fence_token) VALUES ('" + id + "', 'new', 10)");
        DB.exec("INSERT INTO decks (id, name, hull_id) VALUES ('" + id + "-d', 'old', '" + id + "')");
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Hull mine = em.find(Hull.class, id);
            mine.decks.getFirst().name = "renamed"; // an ordinary change of another entity, not of the fenced row
            assertThat(HULLS.on(em).update(id, FenceToken.of(20), Map.of("status", "written")).isApplied()).isTrue();
            em.getTransaction().commit();
        }
        assertThat(DB.one("SELECT status, fence_token FROM hulls WHERE id = '" + id + "'")).isEqualTo("written|20");
        assertThat(DB.one("SELECT name FROM decks WHERE id = '" + id + "-d'")).as("the child's change, committed with the transaction")
                .isEqualTo("renamed");
    }
}
