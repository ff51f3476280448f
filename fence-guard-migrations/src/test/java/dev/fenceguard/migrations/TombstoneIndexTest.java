package dev.fenceguard.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.testkit.servers.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.extensibility.ConfigurationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TombstoneIndexTest {

    private static TestPostgres.Schema schema;
    private static DataSource ds;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("tombidx");
        ds = schema.dataSource();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    private static void createOrders(String table) throws Exception {
        String t = schema.name() + "." + table;
        Db.exec(schema, "CREATE TABLE " + t + " (id BIGINT PRIMARY KEY, status TEXT NOT NULL)");
        Db.exec(schema, "INSERT INTO " + t + " SELECT g, 'new' FROM generate_series(1, 5000) g");
    }

    /**
     * Flyway with {@code flyway.postgresql.transactional.lock=false}, set on its PostgreSQL extension (the
     * property map needs jackson-databind); by reflection, as this module does not read Flyway's PostgreSQL one.
     */
    private static FluentConfiguration sessionLock(FluentConfiguration configuration) throws Exception {
        Class<? extends ConfigurationExtension> type = Class.forName("org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension")
                .asSubclass(ConfigurationExtension.class);
        type.getMethod("setTransactionalLock", boolean.class).invoke(configuration.getConfigurationExtension(type), false);
        return configuration;
    }

    private static String indexDef(String name) throws Exception {
        return Db.one(schema, "SELECT indexdef FROM pg_indexes WHERE schemaname = '" + schema.name() + "' AND indexname = '" + name + "'");
    }

    @Test
    void javaMigrationBuildsTheValidPartialIndexOutsideATransactionWithoutRewritingTheTable() throws Exception {
        createOrders("orders_java");
        FenceColumn column = FenceColumn.on(schema.name(), "orders_java").withTombstoneColumn("fence_deleted");
        FluentConfiguration configuration = Flyway.configure().dataSource(ds).schemas(schema.name()).table("history_idx").baselineOnMigrate(true)
                .baselineVersion("0").javaMigrations(new FenceColumnMigration("1", column),
                        new TombstoneIndexMigration("2", TombstoneIndex.on(column, "id")))
                .locations("classpath:no-sql-migrations-here");
        Flyway flyway = sessionLock(configuration).load();
        String fileNode = Db.one(schema, "SELECT pg_relation_filenode('" + schema.name() + ".orders_java')");
        assertThat(flyway.migrate().migrationsExecuted).isEqualTo(2);
        assertThat(flyway.migrate().migrationsExecuted).as("second run").isZero();
        assertThat(indexDef("orders_java_fence_tombstones")).isEqualTo("CREATE INDEX orders_java_fence_tombstones ON " + schema.name()
                + ".orders_java USING btree (id, fence_token) WHERE fence_deleted");
        assertThat(Db.one(schema, "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                + "WHERE c.relname = 'orders_java_fence_tombstones'")).isEqualTo("t");
        assertThat(Db.one(schema, "SELECT pg_relation_filenode('" + schema.name() + ".orders_java')")).as("no table rewrite")
                .isEqualTo(fileNode);
    }

    @Test
    void theSqlScriptRunsAsAFlywayMigrationOfItsOwn(@TempDir Path dir) throws Exception {
        createOrders("orders_sql");
        FenceColumn column = FenceColumn.on(schema.name(), "orders_sql").withTombstoneColumn("fence_deleted");
        TombstoneIndex index = TombstoneIndex.on(column, "id").withName("orders_sql_purge");
        Files.writeString(dir.resolve("V1__fence_column.sql"), column.script());
        Files.writeString(dir.resolve("V2__tombstone_index.sql"), index.script());
        Flyway flyway = sessionLock(Flyway.configure().dataSource(ds).schemas(schema.name()).table("history_idx_sql")
                .baselineOnMigrate(true).baselineVersion("0").locations("filesystem:" + dir)).load();
        assertThat(flyway.migrate().migrationsExecuted).isEqualTo(2);
        assertThat(indexDef("orders_sql_purge")).endsWith("USING btree (id, fence_token) WHERE fence_deleted");
    }

    @Test
    void withFlywaysTransactionalLockTheMigrationFailsAtOnceInsteadOfWaitingForever() throws Exception {
        createOrders("orders_locked");
        FenceColumn column = FenceColumn.on(schema.name(), "orders_locked").withTombstoneColumn("fence_deleted");
        Flyway flyway = Flyway.configure().dataSource(ds).schemas(schema.name()).table("history_idx_locked").baselineOnMigrate(true)
                .baselineVersion("0").javaMigrations(new FenceColumnMigration("1", column),
                        new TombstoneIndexMigration("2", TombstoneIndex.on(column, "id")))
                .locations("classpath:no-sql-migrations-here").load();
        assertThatThrownBy(flyway::migrate).hasStackTraceContaining("flyway.postgresql.transactional.lock=false");
        assertThat(indexDef("orders_locked_fence_tombstones")).as("nothing built").isNull();
    }

    @Test
    void theStatementIsPinnedAndBadSpecsFailBeforeAnySql() {
        FenceColumn column = FenceColumn.on("shop", "orders").withColumn("fence").withTombstoneColumn("gone");
        assertThat(TombstoneIndex.on(column, "order_id").statement()).isEqualTo("CREATE INDEX CONCURRENTLY IF NOT EXISTS "
                + "\"orders_fence_tombstones\" ON \"shop\".\"orders\" (\"order_id\", \"fence\") WHERE \"gone\"");
        assertThatThrownBy(() -> TombstoneIndex.on(FenceColumn.on("shop", "orders"), "id")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs the tombstone column");
        assertThatThrownBy(() -> TombstoneIndex.on(column, "id; drop")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TombstoneIndex.on(column, "id").withName("x".repeat(64))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 63 characters");
        assertThatThrownBy(() -> new TombstoneIndexMigration("v2", TombstoneIndex.on(column, "id")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new TombstoneIndexMigration("2", TombstoneIndex.on(column, "id")).canExecuteInTransaction()).isFalse();
    }
}
