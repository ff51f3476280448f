package dev.fenceguard.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FenceColumnTest {

    private static TestPostgres.Schema schema;
    private static DataSource ds;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("fencecol");
        ds = schema.dataSource();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    private static String createOrders(String table) throws Exception {
        String t = schema.name() + "." + table;
        Db.exec(schema, "CREATE TABLE " + t + " (id BIGINT PRIMARY KEY, status TEXT NOT NULL, amount NUMERIC(10,2))");
        Db.exec(schema, "INSERT INTO " + t + " SELECT g, 'new', g * 1.5 FROM generate_series(1, 5000) g");
        return t;
    }

    private static String digest(String t) throws Exception {
        return Db.one(schema, "SELECT md5(string_agg(id || ':' || status || ':' || amount, ',' ORDER BY id)) FROM " + t);
    }

    @Test
    void javaMigrationAddsAMetadataOnlyColumnWithoutTouchingData() throws Exception {
        String t = createOrders("orders_java");
        String before = digest(t);
        String fileNode = Db.one(schema, "SELECT pg_relation_filenode('" + t + "')");
        Flyway flyway = Flyway.configure().dataSource(ds).schemas(schema.name()).table("history_java").baselineOnMigrate(true).baselineVersion("0")
                .javaMigrations(new FenceColumnMigration("1", FenceColumn.on(schema.name(), "orders_java")
                        .withTombstoneColumn("fence_deleted")))
                .locations("classpath:no-sql-migrations-here").load();
        assertThat(flyway.migrate().migrationsExecuted).isEqualTo(1);
        assertThat(flyway.migrate().migrationsExecuted).as("second run").isZero();
        assertThat(digest(t)).as("no data changed").isEqualTo(before);
        assertThat(Db.one(schema, "SELECT pg_relation_filenode('" + t + "')")).as("no table rewrite").isEqualTo(fileNode);
        assertThat(Db.one(schema, "SELECT count(*) FILTER (WHERE fence_token = 0 AND NOT fence_deleted) FROM " + t)).isEqualTo("5000");
        assertThat(Db.rows(schema, "SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns "
                + "WHERE table_schema = '" + schema.name() + "' AND table_name = 'orders_java' AND column_name LIKE 'fence%' ORDER BY 1"))
                .containsExactly("fence_deleted|boolean|NO|false", "fence_token|bigint|NO|0");
    }

    @Test
    void statementsAreIdempotentAndTextEncodingReadsAsZero() throws Exception {
        String t = createOrders("orders_text");
        FenceColumn column = FenceColumn.on(schema.name(), "orders_text").withEncoding(FenceEncoding.TEXT);
        for (int run = 0; run < 2; run++) {
            try (var c = ds.getConnection(); var s = c.createStatement()) {
                c.setAutoCommit(false);
                for (String sql : column.statements()) {
                    s.execute(sql);
                }
                c.commit();
            }
        }
        assertThat(Db.one(schema, "SELECT DISTINCT fence_token FROM " + t)).isEqualTo("000000000000000");
        assertThat(Db.one(schema, "SELECT data_type || '(' || character_maximum_length || ')' FROM information_schema.columns "
                + "WHERE table_schema = '" + schema.name() + "' AND table_name = 'orders_text' AND column_name = 'fence_token'"))
                .isEqualTo("character(15)");
    }

    @Test
    void lockTimeoutMakesTheAlterGiveUpInsteadOfQueueing() throws Exception {
        String t = createOrders("orders_busy");
        FenceColumn column = FenceColumn.on(schema.name(), "orders_busy").withLockTimeout(Duration.ofMillis(200));
        try (var holder = ds.getConnection(); var hs = holder.createStatement()) {
            holder.setAutoCommit(false);
            hs.execute("LOCK TABLE " + t + " IN ACCESS SHARE MODE"); // a long-running reader
            try (var c = ds.getConnection(); var s = c.createStatement()) {
                c.setAutoCommit(false);
                assertThatThrownBy(() -> {
                    for (String sql : column.statements()) {
                        s.execute(sql);
                    }
                }).hasMessageContaining("lock timeout");
                c.rollback();
            }
            holder.rollback();
        }
        assertThat(Db.one(schema, "SELECT count(*) FROM information_schema.columns WHERE table_schema = '" + schema.name()
                + "' AND table_name = 'orders_busy' AND column_name = 'fence_token'")).isEqualTo("0");
    }

    @Test
    void generatorWritesTheNextVersionAndFlywayAppliesIt(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("V1__init.sql"), "SELECT 1;");
        Files.writeString(dir.resolve("V2_1__more.sql"), "SELECT 1;");
        Files.writeString(dir.resolve("V10__orders.sql"), "SELECT 1;");
        Files.writeString(dir.resolve("R__view.sql"), "SELECT 1;");
        createOrders("orders_cli");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = FenceColumnGenerator.run(new String[] {"--dir", dir.toString(), "--table", schema.name() + ".orders_cli",
                "--tombstone-column", "fence_deleted"}, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        assertThat(status).isZero();
        Path file = dir.resolve("V11__fence_guard_orders_cli_fence_token.sql");
        assertThat(out.toString(StandardCharsets.UTF_8).trim()).isEqualTo("wrote " + file);
        assertThat(Files.readString(file)).contains("SET LOCAL lock_timeout = '5000ms';")
                .contains("ALTER TABLE \"" + schema.name() + "\".\"orders_cli\" ADD COLUMN IF NOT EXISTS \"fence_token\" BIGINT NOT NULL DEFAULT 0;");
        // Apply just the generated file with Flyway, twice.
        Path only = Files.createDirectory(dir.resolve("only"));
        Files.copy(file, only.resolve(file.getFileName()));
        Flyway flyway = Flyway.configure().dataSource(ds).schemas(schema.name()).table("history_cli").baselineOnMigrate(true).baselineVersion("0")
                .locations("filesystem:" + only).load();
        assertThat(flyway.migrate().migrationsExecuted).isEqualTo(1);
        assertThat(flyway.migrate().migrationsExecuted).isZero();
        assertThat(Db.one(schema, "SELECT count(*) FROM " + schema.name() + ".orders_cli WHERE fence_token = 0")).isEqualTo("5000");
        // Never overwrites.
        assertThat(FenceColumnGenerator.run(new String[] {"--dir", dir.toString(), "--table", schema.name() + ".orders_cli",
                "--version", "11"}, System.out, new PrintStream(new ByteArrayOutputStream()))).isEqualTo(1);
    }

    @Test
    void generatorRefusesBadInputAndWritesNothing(@TempDir Path dir) throws Exception {
        String[][] bad = {
                {"--dir", dir.toString(), "--table", "orders; DROP TABLE x"},
                {"--dir", dir.toString(), "--table", "orders", "--column", "fence\"--"},
                {"--dir", dir.toString(), "--table", "orders", "--column", "fence_token", "--tombstone-column", "fence_token"},
                {"--dir", dir.toString(), "--table", "ördërs"},
                {"--dir", dir.toString(), "--table", "x".repeat(10_000)},
                {"--dir", dir.toString(), "--table", "orders", "--encoding", "varchar"},
                {"--dir", dir.toString(), "--table", "orders", "--version", "1; rm"},
                {"--dir", dir.toString(), "--table", "orders", "--lock-timeout-ms", "0"},
                {"--dir", dir.resolve("missing").toString(), "--table", "orders"},
                {"--table", "orders"},
                {"--dir", dir.toString(), "--table"},
        };
        for (String[] args : bad) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int status = FenceColumnGenerator.run(args, System.out, new PrintStream(err, true, StandardCharsets.UTF_8));
            assertThat(status).as("args %s", String.join(" ", args).substring(0, Math.min(80, String.join(" ", args).length()))).isEqualTo(2);
            assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("error: ");
        }
        try (var files = Files.list(dir)) {
            assertThat(files.toList()).as("nothing written").isEmpty();
        }
    }

    @Test
    void specValidationNamesTheProblem() {
        assertThatThrownBy(() -> FenceColumn.on("public", "orders").withColumn("a-b"))
                .hasMessageStartingWith("fence column must be a plain SQL identifier");
        assertThatThrownBy(() -> new FenceColumnMigration("v1", FenceColumn.on("public", "orders")))
                .hasMessage("version must be digits separated by '.' or '_', was 'v1'");
        assertThatThrownBy(() -> FenceColumn.on("public", "orders").withLockTimeout(Duration.ZERO))
                .hasMessage("lock timeout must be between 1 ms and 10 min, was PT0S");
    }
}
