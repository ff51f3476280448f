package dev.fenceguard.jpa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jpa.spring.jparepo.Parcel;
import dev.fenceguard.jpa.spring.jparepo.ParcelRepository;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.transaction.support.TransactionTemplate;

/** {@link FencedJpaRepository} added to an ordinary Spring Data JPA repository, on real PostgreSQL. */
class SpringDataJpaFragmentTest {

    private static final SpringContexts SPRING = SpringContexts.jpa("sdjpa", Parcel.DDL);
    private static final ParcelRepository PARCELS = SPRING.bean(ParcelRepository.class);
    private static final TransactionTemplate TX = SPRING.tx;

    @AfterAll
    static void close() {
        SPRING.close();
    }

    private static String row(long id) {
        return SPRING.one("SELECT status, fence_token, deleted, version FROM parcels WHERE id = " + id);
    }

    @Test
    void theRepositoryGainsFencedWritesBesideItsOwn() {
        PARCELS.save(new Parcel(1, "new"));
        assertThat(PARCELS.fencedUpdate(1L, FenceToken.of(5), Map.of("status", "sent"))).isEqualTo(new WriteOutcome.Applied("Parcel[id=1]", 5));
        assertThat(PARCELS.fencedUpdate(1L, FenceToken.of(4), Map.of("status", "zombie"))).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(5));
        assertThat(PARCELS.fencedClaim(1L, FenceToken.of(6)).isApplied()).isTrue();
        assertThat(row(1)).isEqualTo("sent|6|null|2");
        assertThat(PARCELS.findById(1L).orElseThrow().status).isEqualTo("sent");
    }

    @Test
    void aDeleteKeepsItsTombstoneAgainstAStaleUpsert() {
        assertThat(PARCELS.fencedUpsert(2L, FenceToken.of(3), Map.of("status", "made")).isApplied()).isTrue();
        assertThat(PARCELS.fencedDelete(2L, FenceToken.of(4)).isApplied()).isTrue();
        assertThat(PARCELS.fencedUpsert(2L, FenceToken.of(3), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(row(2)).isEqualTo("made|4|t|1");
    }

    @Test
    void aFencedSaveIsTheRepositorysSaveRefusedForAStaleFence() {
        Parcel p = new Parcel(5, "saved");
        assertThat(PARCELS.fencedSave(p, FenceToken.of(3)).isApplied()).isTrue();
        p.status = "zombie";
        assertThat(PARCELS.fencedSave(p, FenceToken.of(2))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(row(5)).isEqualTo("saved|3|f|0");
    }

    @Test
    void writesJoinTheCallersTransactionAndKeepItsInstanceInStep() {
        PARCELS.save(new Parcel(3, "new"));
        TX.executeWithoutResult(status -> {
            Parcel p = PARCELS.findById(3L).orElseThrow();
            assertThat(PARCELS.fencedUpdate(3L, FenceToken.of(8), Map.of("status", "fenced")).isApplied()).isTrue();
            assertThat(p.status).as("the transaction's managed instance was refreshed").isEqualTo("fenced");
            p.status = p.status + "+saved"; // saved at commit on top of the fenced row
        });
        assertThat(row(3)).isEqualTo("fenced+saved|8|null|2");
        TX.executeWithoutResult(status -> {
            PARCELS.fencedUpdate(3L, FenceToken.of(9), Map.of("status", "rolled back"));
            status.setRollbackOnly();
        });
        assertThat(row(3)).isEqualTo("fenced+saved|8|null|2");
    }

    @Test
    void aRefusedArgumentDoesNotSpoilTheCallersTransaction() {
        PARCELS.save(new Parcel(6, "new"));
        TX.executeWithoutResult(status -> {
            assertThatThrownBy(() -> PARCELS.fencedUpdate(6L, FenceToken.of(1), Map.of("colour", "x")))
                    .isInstanceOf(InvalidDataAccessApiUsageException.class);
            assertThat(PARCELS.fencedUpdate(6L, FenceToken.of(2), Map.of("status", "after")).isApplied()).isTrue();
        }); // commits: the refusal above did not mark the transaction rollback-only
        assertThat(row(6)).isEqualTo("after|2|null|1");
    }

    @Test
    void badInputFailsBeforeAnyStatementTranslatedAsSpringTranslatesRepositoryErrors() {
        PARCELS.save(new Parcel(4, "new"));
        // Spring Data's repository proxy turns IllegalArgumentException into InvalidDataAccessApiUsageException.
        assertThatThrownBy(() -> PARCELS.fencedUpdate(4L, FenceToken.of(1), Map.of("colour", "x")))
                .isInstanceOf(InvalidDataAccessApiUsageException.class).hasRootCauseInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'colour' is not an attribute of Parcel");
        assertThatThrownBy(() -> PARCELS.fencedUpdate(4L, FenceToken.of(1), Map.of("fenceToken", 7L)))
                .isInstanceOf(InvalidDataAccessApiUsageException.class)
                .hasMessageContaining("must not set the id, fence, tombstone or @Version attribute");
        assertThat(row(4)).isEqualTo("new|null|null|0");
    }
}
