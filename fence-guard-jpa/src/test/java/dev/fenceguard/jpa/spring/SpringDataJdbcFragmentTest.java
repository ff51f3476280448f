package dev.fenceguard.jpa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jpa.spring.jdbcrepo.BinRepository;
import dev.fenceguard.jpa.spring.jdbcrepo.Crate;
import dev.fenceguard.jpa.spring.jdbcrepo.CrateRepository;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.transaction.support.TransactionTemplate;

/** {@link FencedJdbcRepository} added to an ordinary Spring Data JDBC repository, on real PostgreSQL. */
class SpringDataJdbcFragmentTest {

    private static final SpringContexts SPRING = SpringContexts.jdbc("sdjdbc", Crate.DDL);
    private static final CrateRepository CRATES = SPRING.bean(CrateRepository.class);
    private static final TransactionTemplate TX = SPRING.tx;

    @AfterAll
    static void close() {
        SPRING.close();
    }

    private static String row(long id) {
        return SPRING.one("SELECT label, fence_token, deleted FROM crates WHERE id = " + id);
    }

    @Test
    void theRepositoryGainsFencedWritesBesideItsOwn() {
        CRATES.save(new Crate(null, "new", null, false)); // insert through Spring Data JDBC itself
        long id = CRATES.findAll().iterator().next().id();
        assertThat(CRATES.fencedUpdate(id, FenceToken.of(5), Map.of("label", "sent")).isApplied()).isTrue();
        assertThat(CRATES.fencedUpdate(id, FenceToken.of(4), Map.of("label", "zombie"))).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(5));
        assertThat(CRATES.fencedClaim(id, FenceToken.of(6)).isApplied()).isTrue();
        assertThat(row(id)).isEqualTo("sent|6|f");
        assertThat(CRATES.findById(id).orElseThrow().label()).isEqualTo("sent");
    }

    @Test
    void aDeleteKeepsItsTombstoneAgainstAStaleUpsert() {
        assertThat(CRATES.fencedUpsert(1000L, FenceToken.of(3), Map.of("label", "made")).isApplied()).isTrue();
        assertThat(CRATES.fencedDelete(1000L, FenceToken.of(4)).isApplied()).isTrue();
        assertThat(CRATES.fencedUpsert(1000L, FenceToken.of(3), Map.of("label", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(CRATES.fencedDelete(1001L, FenceToken.of(4)).isApplied()).as("an id never seen gets a tombstone").isTrue();
        assertThat(row(1000)).isEqualTo("made|4|t");
        assertThat(row(1001)).isEqualTo("null|4|t");
    }

    @Test
    void aFencedSaveIsTheRepositorysSaveRefusedForAStaleFence() {
        assertThat(CRATES.fencedSave(new Crate(4000L, "saved", null, null), FenceToken.of(3)).isApplied()).isTrue();
        assertThat(CRATES.fencedSave(new Crate(4000L, "zombie", null, null), FenceToken.of(2))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(row(4000)).isEqualTo("saved|3|f");
        assertThatThrownBy(() -> CRATES.fencedSave(new Crate(null, "x", null, null), FenceToken.of(3))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the Crate to save has no id; a fenced save needs an assigned id");
    }

    @Test
    void writesRunOnTheConnectionOfTheCallersTransaction() {
        assertThat(CRATES.fencedUpsert(2000L, FenceToken.of(1), Map.of("label", "kept")).isApplied()).isTrue();
        TX.executeWithoutResult(status -> {
            assertThat(CRATES.fencedUpdate(2000L, FenceToken.of(2), Map.of("label", "rolled back")).isApplied()).isTrue();
            assertThat(CRATES.findById(2000L).orElseThrow().label()).as("seen inside the transaction").isEqualTo("rolled back");
            status.setRollbackOnly();
        });
        assertThat(row(2000)).isEqualTo("kept|1|f");
    }

    @Test
    void badInputFailsBeforeAnyStatement() {
        assertThat(CRATES.fencedUpsert(3000L, FenceToken.of(1), Map.of("label", "x")).isApplied()).isTrue();
        assertThatThrownBy(() -> CRATES.fencedUpdate(3000L, FenceToken.of(2), Map.of("colour", "x"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'colour' is not a property of Crate");
        assertThatThrownBy(() -> CRATES.fencedUpdate(3000L, FenceToken.of(2), Map.of("fenceToken", 9L))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not set the key, fence or tombstone column");
        assertThatThrownBy(() -> CRATES.fencedUpdate(3000L, FenceToken.of(2), Map.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("assignments must set at least one column");
        assertThat(row(3000)).isEqualTo("x|1|f");
        // No bins table exists: the refusal comes before any SQL.
        assertThatThrownBy(() -> SPRING.bean(BinRepository.class).fencedUpdate(1L, FenceToken.of(1), Map.of("fence", 1L)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Bin has a @Version property, which fenced writes "
                        + "through Spring Data JDBC cannot raise");
    }
}
