package dev.fenceguard.jpa;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.testkit.servers.TestPostgres;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.sql.DataSource;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.jpa.HibernatePersistenceConfiguration;
import org.hibernate.resource.jdbc.spi.StatementInspector;

/** A schema of its own on the test PostgreSQL, a pool on it, and a Hibernate factory for the given entities. */
final class JpaTestSupport implements AutoCloseable {
    final TestPostgres.Schema schema;
    final HikariDataSource ds;
    final EntityManagerFactory emf;
    /** SQL statements Hibernate has prepared on this factory, counted by a statement inspector. */
    final AtomicInteger statements = new AtomicInteger();
    /** The text of each of those statements, in order. */
    final List<String> sql = new CopyOnWriteArrayList<>();

    JpaTestSupport(String prefix, List<String> ddl, Class<?>... entities) {
        schema = TestPostgres.server().newSchema(prefix);
        for (String statement : ddl) {
            schema.execute("SET search_path TO " + schema.name() + "; " + statement);
        }
        ds = pool(schema.dataSource(), prefix);
        HibernatePersistenceConfiguration config = new HibernatePersistenceConfiguration("fg-" + prefix);
        for (Class<?> e : entities) {
            config.managedClass(e);
        }
        emf = config.property(AvailableSettings.JAKARTA_NON_JTA_DATASOURCE, ds)
                .property(AvailableSettings.STATEMENT_INSPECTOR, (StatementInspector) sql -> {
                    statements.incrementAndGet();
                    this.sql.add(sql);
                    return sql;
                })
                .createEntityManagerFactory();
    }

    static HikariDataSource pool(DataSource target, String name) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(target);
        config.setMaximumPoolSize(8);
        config.setPoolName("fg-jpa-" + name);
        return new HikariDataSource(config);
    }

    /** One row of {@code sql}, columns joined by {@code |}; null if none. */
    String one(String sql) {
        List<String> rows = schema.query(sql);
        return rows.isEmpty() ? null : rows.getFirst();
    }

    void exec(String sql) {
        schema.execute("SET search_path TO " + schema.name() + "; " + sql);
    }

    /** Runs {@code work} in a transaction of its own, committed. */
    <R> R inTransaction(Function<EntityManager, R> work) {
        try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            R out = work.apply(em);
            em.getTransaction().commit();
            return out;
        }
    }

    @Override
    public void close() {
        emf.close();
        ds.close();
        schema.close();
    }
}
