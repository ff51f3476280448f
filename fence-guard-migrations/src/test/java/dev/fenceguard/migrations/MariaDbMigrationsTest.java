package dev.fenceguard.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.testkit.servers.TestMariaDb;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.migration.JavaMigration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lock table and fence columns on MariaDB: Flyway with flyway-mysql, the generator's MySQL DDL. */
class MariaDbMigrationsTest {

    private static TestMariaDb.Database db;
    private static DataSource ds;

    @BeforeAll
    static void setUp() {
        db = TestMariaDb.server().newDatabase("migrations");
        ds = db.dataSource();
    }

    @AfterAll
    static void tearDown() {
        db.close();
    }

    @Test
    void createsTheDocumentedLockTableOnceAndIsANoOpAfterwards() {
        assertThat(FenceGuardMigrations.builder(ds).withSchema(db.name()).withTable("locks_a").migrate()).isEqualTo(2);
        assertThat(FenceGuardMigrations.builder(ds).withSchema(db.name()).withTable("locks_a").migrate()).isZero();
        // The stored layout is a compatibility promise (docs/mysql-mariadb.md): this test pins it.
        assertThat(db.query("SELECT column_name, column_type, is_nullable, column_key FROM information_schema.columns "
                + "WHERE table_schema = '" + db.name() + "' AND table_name = 'locks_a' ORDER BY ordinal_position"))
                .containsExactly(
                        "lock_key|varbinary(512)|NO|PRI",
                        "fence|bigint(20)|NO|",
                        "lock_id|char(22)|YES|",
                        "expires_at|datetime(6)|YES|",
                        "acquired_at|datetime(6)|YES|");
    }

    @Test
    void aLockTableOfTheFirstVersionGetsItsFloorRowWithoutTouchingItsRows() {
        // Tried: a database migrated before the floor existed (V1 only, rows in use), then today's migrate().
        Flyway.configure().dataSource(ds).locations(FenceGuardMigrations.MYSQL_LOCATION).schemas(db.name()).createSchemas(true)
                .table(FenceGuardMigrations.historyTable("locks_v1")).baselineOnMigrate(true).baselineVersion("0")
                .placeholders(FenceGuardMigrations.placeholders(db.name(), "locks_v1")).target("1").load().migrate();
        String t = db.name() + ".locks_v1";
        db.execute("INSERT INTO " + t + " (lock_key, fence) VALUES ('a', 7), ('b', 3)");

        assertThat(FenceGuardMigrations.builder(ds).withSchema(db.name()).withTable("locks_v1").migrate()).isEqualTo(1);

        assertThat(db.query("SELECT CONCAT(CAST(lock_key AS CHAR), '=', fence) FROM " + t + " ORDER BY 1")).containsExactly("a=7", "b=3");
        assertThat(db.query("SELECT CONCAT(lock_table, '=', fence_floor) FROM " + db.name()
                + ".fence_guard_lock_floors WHERE lock_table = 'locks_v1'")).containsExactly("locks_v1=0");
        assertThat(FenceGuardMigrations.builder(ds).withSchema(db.name()).withTable("locks_v1").migrate()).isZero();
        assertThat(db.query("SELECT column_name, column_type, is_nullable, column_key FROM information_schema.columns "
                + "WHERE table_schema = '" + db.name() + "' AND table_name = 'fence_guard_lock_floors' ORDER BY ordinal_position"))
                .containsExactly("lock_table|varchar(64)|NO|PRI", "fence_floor|bigint(20)|NO|");
    }

    @Test
    void theIdempotencyTableIsRefusedOnMariaDbAndNothingIsCreated() {
        // Tried: the PostgreSQL-only idempotency migration against MariaDB. It must not run the lock
        // table's MySQL migration under the idempotency table's name, nor the PostgreSQL DDL.
        assertThatThrownBy(() -> FenceGuardMigrations.idempotencyBuilder(ds).withSchema(db.name()).withTable("idem_a").migrate())
                .isInstanceOf(org.flywaydb.core.api.FlywayException.class)
                .hasMessageContaining("idem_a")
                .hasMessageContaining("PostgreSQL only");
        assertThat(db.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = '" + db.name()
                + "' AND table_name LIKE '%idem_a%'")).as("neither the table nor a Flyway history for it").containsExactly("0");
    }

    @Test
    void theSingleflightTableIsRefusedOnMariaDbAndNothingIsCreated() {
        // Tried: the PostgreSQL-only singleflight migration against MariaDB.
        assertThatThrownBy(() -> FenceGuardMigrations.singleflightBuilder(ds).withSchema(db.name()).withTable("flights_a").migrate())
                .isInstanceOf(org.flywaydb.core.api.FlywayException.class)
                .hasMessageContaining("flights_a")
                .hasMessageContaining("PostgreSQL only");
        assertThat(db.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = '" + db.name()
                + "' AND table_name LIKE '%flights_a%'")).as("neither the table nor a Flyway history for it").containsExactly("0");
    }

    @Test
    void checkConstraintsRefuseFencesOutOfRangeAndHalfHeldRows() {
        FenceGuardMigrations.builder(ds).withSchema(db.name()).withTable("locks_d").migrate();
        String t = db.name() + ".locks_d";
        assertThatThrownBy(() -> db.execute("INSERT INTO " + t + " (lock_key, fence) VALUES ('k', 900000000000001)"))
                .hasMessageContaining("CONSTRAINT");
        assertThatThrownBy(() -> db.execute("INSERT INTO " + t + " (lock_key, fence, lock_id) VALUES ('k', 1, 'x')"))
                .hasMessageContaining("CONSTRAINT");
    }

    @Test
    void fenceColumnsAreAddedInstantlyWithoutTouchingData() throws Exception {
        db.execute("CREATE TABLE orders_java (id BIGINT PRIMARY KEY, status VARCHAR(20) NOT NULL)");
        db.execute("INSERT INTO orders_java SELECT seq, 'new' FROM seq_1_to_2000");
        JavaMigration migration = new FenceColumnMigration("7", FenceColumn.on(db.name(), "orders_java")
                .withTombstoneColumn("fence_deleted").withLockTimeout(Duration.ofMillis(1500)));
        Flyway flyway = Flyway.configure().dataSource(ds).schemas(db.name()).table("history_java").baselineOnMigrate(true)
                .baselineVersion("0").javaMigrations(migration).locations("classpath:nothing-here").load();
        assertThat(flyway.migrate().migrationsExecuted).isEqualTo(1);
        assertThat(db.query("SELECT count(*), SUM(fence_token), SUM(fence_deleted) FROM orders_java")).containsExactly("2000|0|0");
        assertThat(FenceColumn.on(db.name(), "orders_java").withLockTimeout(Duration.ofMillis(1500)).mysqlStatements())
                .containsExactly("SET SESSION lock_wait_timeout = 2",
                        "ALTER TABLE `" + db.name() + "`.`orders_java` ADD COLUMN `fence_token` BIGINT NOT NULL DEFAULT 0, ALGORITHM=INSTANT");
    }

    @Test
    void tombstoneIndexIsAddedInPlaceWithoutRebuildingTheTable() throws Exception {
        db.execute("CREATE TABLE orders_idx (id BIGINT PRIMARY KEY, status VARCHAR(20) NOT NULL)");
        db.execute("INSERT INTO orders_idx SELECT seq, 'new' FROM seq_1_to_2000");
        FenceColumn column = FenceColumn.on(db.name(), "orders_idx").withTombstoneColumn("fence_deleted")
                .withLockTimeout(Duration.ofMillis(1500));
        String tableId = "SELECT TABLE_ID FROM information_schema.INNODB_SYS_TABLES WHERE NAME = '" + db.name() + "/orders_idx'";
        Flyway.configure().dataSource(ds).schemas(db.name()).table("history_idx").baselineOnMigrate(true).baselineVersion("0")
                .javaMigrations(new FenceColumnMigration("1", column)).locations("classpath:nothing-here").load().migrate();
        List<String> before = db.query(tableId);
        TombstoneIndex index = TombstoneIndex.on(column, "id");
        Flyway flyway = Flyway.configure().dataSource(ds).schemas(db.name()).table("history_idx").baselineOnMigrate(true)
                .baselineVersion("0").javaMigrations(new FenceColumnMigration("1", column), new TombstoneIndexMigration("2", index))
                .locations("classpath:nothing-here").load();
        assertThat(flyway.migrate().migrationsExecuted).isEqualTo(1);
        assertThat(db.query("SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '"
                + db.name() + "' AND TABLE_NAME = 'orders_idx' AND INDEX_NAME = 'orders_idx_fence_tombstones'"))
                .containsExactly("fence_deleted,id,fence_token");
        assertThat(db.query(tableId)).as("InnoDB built the index in place: the table was not rebuilt").isEqualTo(before).hasSize(1);
        assertThat(db.query("SELECT count(*) FROM orders_idx")).containsExactly("2000");
        assertThat(index.mysqlStatements()).containsExactly("SET SESSION lock_wait_timeout = 2", "ALTER TABLE `" + db.name()
                + "`.`orders_idx` ADD INDEX `orders_idx_fence_tombstones` (`fence_deleted`, `id`, `fence_token`), ALGORITHM=INPLACE, LOCK=NONE");
        assertThat(index.mysqlScript()).contains(index.mysqlStatements().get(1) + ";\n");
    }

    @Test
    void generatorWritesMySqlDdlThatFlywayApplies(@TempDir Path dir) throws Exception {
        db.execute("CREATE TABLE orders_cli (id BIGINT PRIMARY KEY, status VARCHAR(20) NOT NULL)");
        db.execute("INSERT INTO orders_cli VALUES (1, 'new')");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = FenceColumnGenerator.run(new String[] {"--dir", dir.toString(), "--table", db.name() + ".orders_cli",
                "--encoding", "text", "--database", "mariadb"}, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        assertThat(status).isZero();
        Path file = dir.resolve("V1__fence_guard_orders_cli_fence_token.sql");
        assertThat(Files.readString(file)).contains("SET SESSION lock_wait_timeout = 5;")
                .contains("ALTER TABLE `" + db.name() + "`.`orders_cli` ADD COLUMN `fence_token` CHAR(15) NOT NULL DEFAULT '000000000000000', "
                        + "ALGORITHM=INSTANT;");
        Flyway flyway = Flyway.configure().dataSource(ds).schemas(db.name()).table("history_cli").baselineOnMigrate(true)
                .baselineVersion("0").locations("filesystem:" + dir).load();
        assertThat(flyway.migrate().migrationsExecuted).isEqualTo(1);
        assertThat(db.query("SELECT status, fence_token FROM orders_cli")).containsExactly("new|000000000000000");
    }

    @Test
    void generatorRefusesAMySqlTableWithoutItsDatabaseAndAnUnknownDatabase(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(FenceColumnGenerator.run(new String[] {"--dir", dir.toString(), "--table", "orders", "--database", "mysql"},
                System.out, new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--table needs the database for MySQL/MariaDB");
        assertThat(FenceColumnGenerator.run(new String[] {"--dir", dir.toString(), "--table", "a.orders", "--database", "oracle"},
                System.out, new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--database must be postgresql or mysql");
        try (var files = Files.list(dir)) {
            assertThat(files.toList()).as("nothing written").isEqualTo(List.of());
        }
    }
}
