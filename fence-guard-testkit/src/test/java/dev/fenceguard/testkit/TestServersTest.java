package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.testkit.servers.PostgresServers;
import dev.fenceguard.testkit.servers.RedisServers;
import dev.fenceguard.testkit.servers.TestDynamoDb;
import dev.fenceguard.testkit.servers.TestFirestore;
import dev.fenceguard.testkit.servers.TestMariaDb;
import dev.fenceguard.testkit.servers.TestPostgres;
import dev.fenceguard.testkit.servers.TestRedis;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** The harness finds or starts each server, and schemas isolate and clean up. */
class TestServersTest {

    @Test
    void postgresSchemaIsCreatedUsableAndDropped() throws Exception {
        TestPostgres pg = TestPostgres.server();
        String name;
        try (TestPostgres.Schema schema = pg.newSchema("harness")) {
            name = schema.name();
            try (Connection c = schema.dataSource().getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE t (id int)");
                try (ResultSet rs = s.executeQuery("SELECT current_schema()")) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo(name);
                }
            }
        }
        try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM information_schema.schemata WHERE schema_name = '" + name + "'")) {
            rs.next();
            assertThat(rs.getInt(1)).as("schema dropped on close").isZero();
        }
    }

    @Test
    void mariaDbDatabaseIsCreatedUsableThroughBothDriverUrlsAndDropped() throws Exception {
        TestMariaDb server = TestMariaDb.server();
        String name;
        try (TestMariaDb.Database db = server.newDatabase("harness")) {
            name = db.name();
            db.execute("CREATE TABLE t (id INT)");
            assertThat(db.query("SELECT DATABASE()")).containsExactly(name);
            assertThat(db.jdbcUrl("mysql", "useAffectedRows=true")).startsWith("jdbc:mysql://").contains("/" + name + "?")
                    .endsWith("useAffectedRows=true");
            try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO t VALUES (1)");
            }
            assertThat(db.query("SELECT COUNT(*) FROM t")).containsExactly("1");
        }
        try (TestMariaDb.Database other = server.newDatabase("harness_check")) {
            assertThat(other.query("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '" + name + "'"))
                    .as("database dropped on close").containsExactly("0");
        }
    }

    @Test
    void dynamoDbAnswersListTables() throws Exception {
        TestDynamoDb server = TestDynamoDb.server();
        var request = java.net.http.HttpRequest.newBuilder(server.endpoint())
                .header("X-Amz-Target", "DynamoDB_20120810.ListTables")
                .header("Content-Type", "application/x-amz-json-1.0")
                .header("X-Amz-Date", "20250101T000000Z")
                .header("Authorization", "AWS4-HMAC-SHA256 Credential=test/20250101/us-east-1/dynamodb/aws4_request,"
                        + " SignedHeaders=host;x-amz-date;x-amz-target, Signature=0")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build();
        var response = java.net.http.HttpClient.newHttpClient().send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("%s answered %s", server, response.body()).isEqualTo(200);
        assertThat(response.body()).contains("\"TableNames\"");
    }

    @Test
    void aPrivateDynaliteOnDiskKeepsItsTablesAcrossAKillAndLeavesNothingBehind() throws Exception {
        TestDynamoDb server = TestDynamoDb.startDynaliteOnDisk();
        String port = Integer.toString(server.endpoint().getPort());
        try {
            createTableWithItem(server);
            server.kill();
            assertThatThrownBy(() -> dynamo(server, "ListTables", "{}")).as("nothing listens while it is down")
                    .isInstanceOf(java.io.IOException.class);
            server.restart();
            assertThat(server.endpoint().getPort()).as("the same port").isEqualTo(Integer.parseInt(port));
            assertThat(dynamo(server, "GetItem", "{\"TableName\":\"kept\",\"Key\":{\"id\":{\"S\":\"a\"}},\"ConsistentRead\":true}"))
                    .as("the item outlived the kill").contains("\"n\":{\"N\":\"42\"}");
        } finally {
            server.close();
        }
        assertThat(tempEntries("fence-guard-dynalite-" + port + "-")).as("its data folder is deleted").isEmpty();
    }

    @Test
    void aPrivateDynaliteInMemoryComesBackEmptyAndTheSharedOneCannotBeKilled() throws Exception {
        TestDynamoDb server = TestDynamoDb.startDynalite();
        try {
            createTableWithItem(server);
            server.kill();
            server.restart();
            assertThat(dynamo(server, "ListTables", "{}")).contains("\"TableNames\":[]");
        } finally {
            server.close();
        }
        assertThatThrownBy(() -> TestDynamoDb.server().kill()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the shared server never is");
    }

    private static void createTableWithItem(TestDynamoDb server) throws Exception {
        dynamo(server, "CreateTable", "{\"TableName\":\"kept\",\"KeySchema\":[{\"AttributeName\":\"id\",\"KeyType\":\"HASH\"}],"
                + "\"AttributeDefinitions\":[{\"AttributeName\":\"id\",\"AttributeType\":\"S\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}");
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (!dynamo(server, "DescribeTable", "{\"TableName\":\"kept\"}").contains("\"TableStatus\":\"ACTIVE\"")) {
            assertThat(System.nanoTime()).as("the table became active within 30 s").isLessThan(deadline);
            Thread.sleep(50); // polling a state the server changes on its own timer, not ordering threads
        }
        dynamo(server, "PutItem", "{\"TableName\":\"kept\",\"Item\":{\"id\":{\"S\":\"a\"},\"n\":{\"N\":\"42\"}}}");
    }

    /** One DynamoDB API call as raw JSON over HTTP (the testkit has no AWS SDK); fails unless it answers 200. */
    private static String dynamo(TestDynamoDb server, String operation, String body) throws Exception {
        var request = java.net.http.HttpRequest.newBuilder(server.endpoint())
                .header("X-Amz-Target", "DynamoDB_20120810." + operation)
                .header("Content-Type", "application/x-amz-json-1.0")
                .header("X-Amz-Date", "20250101T000000Z")
                .header("Authorization", "AWS4-HMAC-SHA256 Credential=test/20250101/us-east-1/dynamodb/aws4_request,"
                        + " SignedHeaders=host;x-amz-date;x-amz-target, Signature=0")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build();
        var response = java.net.http.HttpClient.newHttpClient().send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("%s %s answered %s", server, operation, response.body()).isEqualTo(200);
        return response.body();
    }

    @Test
    void redisAnswersPing() throws Exception {
        var uri = TestRedis.server().uri();
        assertThat(ping(uri.getHost(), uri.getPort())).isEqualTo("+PONG");
    }

    @Test
    void privateRedisServersStartRestartEmptyAndStop() throws Exception {
        try (RedisServers.Server server = RedisServers.start()) {
            assertThat(command(server.port(), "SET k v")).isEqualTo("+OK");
            server.restart();
            assertThat(command(server.port(), "GET k")).as("no persistence: empty after restart").isEqualTo("$-1");
        }
    }

    @Test
    void closingAPrivateRedisServerDeletesItsDirectoryAndLog() {
        RedisServers.Server server = RedisServers.start();
        java.nio.file.Path dir = server.dir();
        assertThat(dir).exists();
        server.close();
        assertThat(dir).doesNotExist();
        assertThat(tempEntries("fence-guard-redis-" + server.port() + "-")).isEmpty();
    }

    @Test
    void aPrivatePostgresKeepsItsDataAcrossARestartAndLeavesNothingBehind() throws Exception {
        PostgresServers.Server pg = PostgresServers.start();
        try (java.sql.Connection c = pg.dataSource().getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE TABLE kept (n INT)");
            s.execute("INSERT INTO kept VALUES (42)");
        }
        pg.restart();
        try (java.sql.Connection c = pg.dataSource().getConnection(); java.sql.Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery("SELECT n FROM kept")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(42);
        }
        pg.close();
        assertThat(tempEntries("fence-guard-postgres-" + pg.port() + "-")).isEmpty();
    }

    private static java.util.List<String> tempEntries(String prefix) {
        String[] names = new java.io.File(System.getProperty("java.io.tmpdir")).list((d, n) -> n.startsWith(prefix));
        return names == null ? java.util.List.of() : java.util.List.of(names);
    }

    @Test
    void firestoreEmulatorAnswers() {
        TestFirestore emulator = TestFirestore.server();
        assertThat(emulator.hostPort()).matches(".+:\\d+");
        assertThat(TestFirestore.newProjectId("x")).startsWith("fgtest-x-").isNotEqualTo(TestFirestore.newProjectId("x"));
    }

    private static String ping(String host, int port) throws Exception {
        try (Socket s = new Socket(host, port)) {
            return roundTrip(s, "PING");
        }
    }

    private static String command(int port, String inline) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            return roundTrip(s, inline);
        }
    }

    private static String roundTrip(Socket s, String inline) throws Exception {
        OutputStream out = s.getOutputStream();
        out.write((inline + "\r\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
        return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }
}
