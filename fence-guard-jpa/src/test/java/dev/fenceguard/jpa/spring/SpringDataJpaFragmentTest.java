package dev.fenceguard.jpa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jpa.spring.jparepo.Parcel;
import dev.fenceguard.jpa.spring.jparepo.ParcelRepository;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import jakarta.persistence.EntityManagerFactory;

/** {@link FencedJpaRepository} added to an ordinary Spring Data JPA repository, on real PostgreSQL. */
class SpringDataJpaFragmentTest {

    private static final TestPostgres.Schema SCHEMA = TestPostgres.server().newSchema("sdjpa");
    private static final AnnotationConfigApplicationContext CONTEXT;
    private static final ParcelRepository PARCELS;
    private static final TransactionTemplate TX;

    static {
        SCHEMA.execute("SET search_path TO " + SCHEMA.name() + "; " + Parcel.DDL);
        CONTEXT = new AnnotationConfigApplicationContext(Config.class);
        PARCELS = CONTEXT.getBean(ParcelRepository.class);
        TX = new TransactionTemplate(CONTEXT.getBean(PlatformTransactionManager.class));
    }

    @Configuration
    @EnableJpaRepositories(basePackageClasses = ParcelRepository.class)
    static class Config {
        @Bean
        DataSource dataSource() {
            return SCHEMA.dataSource();
        }

        @Bean
        LocalContainerEntityManagerFactoryBean entityManagerFactory(DataSource dataSource) {
            LocalContainerEntityManagerFactoryBean f = new LocalContainerEntityManagerFactoryBean();
            f.setDataSource(dataSource);
            f.setPackagesToScan(Parcel.class.getPackageName());
            f.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
            f.setJpaPropertyMap(Map.of("hibernate.default_schema", SCHEMA.name()));
            return f;
        }

        @Bean
        JpaTransactionManager transactionManager(EntityManagerFactory emf) {
            return new JpaTransactionManager(emf);
        }
    }

    @AfterAll
    static void close() {
        CONTEXT.close();
        SCHEMA.close();
    }

    private static String row(long id) {
        List<String> rows = SCHEMA.query("SELECT status, fence_token, deleted, version FROM parcels WHERE id = " + id);
        return rows.isEmpty() ? null : rows.getFirst();
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
