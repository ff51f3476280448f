package dev.fenceguard.testkit.servers;

import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The MariaDB (or MySQL) server for tests, found once per JVM in this order:
 * <ol>
 *   <li>{@code FENCE_GUARD_TEST_MARIADB_URL}: a JDBC URL such as
 *       {@code jdbc:mariadb://127.0.0.1:3306/test?user=root};</li>
 *   <li>Testcontainers ({@code mariadb:10.11}), when a Docker engine answers;</li>
 *   <li>the local server at 127.0.0.1:3306, user root with an empty password, database {@code test}.</li>
 * </ol>
 * If none answers, {@link #server()} throws {@link ServerUnavailableException} naming all three. Needs
 * {@code org.mariadb.jdbc:mariadb-java-client} on the test class path.
 *
 * <p>Servers are shared and keep state between runs, so every test class takes a database of its own
 * with {@link #newDatabase(String)} and drops it when done.
 *
 * @since 0.1
 */
public final class TestMariaDb {

    /** The environment variable read first. */
    public static final String ENV = "FENCE_GUARD_TEST_MARIADB_URL";
    /** The local server tried last. */
    public static final String LOCAL_URL = "jdbc:mariadb://127.0.0.1:3306/test?user=root";

    private static final Pattern URL = Pattern.compile("jdbc:(mariadb|mysql)://([^/?]+)/([^?]*)(\\?.*)?");

    private static TestMariaDb instance;

    private final String jdbcUrl;
    private final String origin;
    private final Object keepAlive;

    private TestMariaDb(String jdbcUrl, String origin, Object keepAlive) {
        if (!URL.matcher(jdbcUrl).matches()) {
            throw new IllegalArgumentException("not a jdbc:mariadb:// or jdbc:mysql:// URL with a database: " + jdbcUrl);
        }
        this.jdbcUrl = jdbcUrl;
        this.origin = origin;
        this.keepAlive = keepAlive;
    }

    /** The shared server, found or started on first use. */
    public static synchronized TestMariaDb server() {
        if (instance == null) {
            instance = find();
        }
        return instance;
    }

    /** The JDBC URL of the server's database (credentials in the URL). */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    /** Where the server came from: {@code env}, {@code testcontainers} or {@code local}. */
    public String origin() {
        return origin;
    }

    /** The server's version, e.g. {@code 10.11.6-MariaDB}. */
    public String version() {
        return query(jdbcUrl, "SELECT VERSION()").getFirst();
    }

    /**
     * Creates a fresh database named {@code fg_<prefix>_<random>}; close the result to drop it.
     *
     * @param prefix lower-case letters, digits and underscores, at most 20 characters
     */
    public Database newDatabase(String prefix) {
        String name = ScratchNames.fresh("database", prefix);
        execute(jdbcUrl, "CREATE DATABASE " + name + " CHARACTER SET utf8mb4");
        return new Database(this, name);
    }

    @Override
    public String toString() {
        return "TestMariaDb[" + origin + " " + ScratchNames.redacted(jdbcUrl) + "]";
    }

    private static TestMariaDb find() {
        return ServerSearch.find("MariaDB", ENV, LOCAL_URL, url -> {
            TestMariaDb env = new TestMariaDb(url, "env", null);
            execute(env.jdbcUrl, "SELECT 1");
            return env;
        }, () -> MariaDbContainer.start(), "local server " + LOCAL_URL, () -> {
            execute(LOCAL_URL, "SELECT 1");
            return new TestMariaDb(LOCAL_URL, "local", null);
        });
    }

    static void execute(String url, String sql) {
        Sql.execute(() -> DriverManager.getConnection(url), "MariaDB", sql);
    }

    static List<String> query(String url, String sql) {
        return Sql.query(() -> DriverManager.getConnection(url), "MariaDB", sql);
    }

    /** Kept in its own class so Testcontainers is loaded only when a Docker engine answers. */
    private static final class MariaDbContainer {
        static TestMariaDb start() {
            var container = new org.testcontainers.containers.GenericContainer<>("mariadb:10.11")
                    .withEnv("MARIADB_ALLOW_EMPTY_ROOT_PASSWORD", "1").withEnv("MARIADB_DATABASE", "test")
                    .withExposedPorts(3306)
                    .waitingFor(org.testcontainers.containers.wait.strategy.Wait.forLogMessage(".*ready for connections.*\\n", 2));
            container.start();
            return new TestMariaDb("jdbc:mariadb://" + container.getHost() + ":" + container.getMappedPort(3306) + "/test?user=root",
                    "testcontainers", container);
        }
    }

    /** A database owned by one test class; {@link #close()} drops it with everything in it. */
    public static final class Database implements AutoCloseable {
        private final TestMariaDb server;
        private final String name;

        Database(TestMariaDb server, String name) {
            this.server = server;
            this.name = name;
        }

        /** The database name (unquoted; lower case, safe as an identifier). */
        public String name() {
            return name;
        }

        /**
         * The JDBC URL of this database for a driver: {@code mariadb} (MariaDB Connector/J) or {@code mysql}
         * (MySQL Connector/J), with {@code extra} parameters ({@code key=value&...}, may be empty) appended.
         */
        public String jdbcUrl(String driver, String extra) {
            if (!driver.equals("mariadb") && !driver.equals("mysql")) {
                throw new IllegalArgumentException("driver must be mariadb or mysql, was '" + driver + "'");
            }
            Matcher m = URL.matcher(server.jdbcUrl);
            if (!m.matches()) {
                throw new IllegalStateException("unexpected URL " + server.jdbcUrl);
            }
            String query = m.group(4) == null ? "" : m.group(4);
            String params = query.isEmpty() ? extra : query.substring(1) + (extra.isEmpty() ? "" : "&" + extra);
            return "jdbc:" + driver + "://" + m.group(2) + "/" + name + (params.isEmpty() ? "" : "?" + params);
        }

        /** A data source on this database through MariaDB Connector/J. */
        public DataSource dataSource() {
            try {
                return new org.mariadb.jdbc.MariaDbDataSource(jdbcUrl("mariadb", ""));
            } catch (SQLException e) {
                throw new IllegalStateException("bad MariaDB URL: " + e.getMessage(), e);
            }
        }

        /** Rows of a query run in this database, each row's columns joined by {@code |} (NULL as "null"). */
        public List<String> query(String sql) {
            return TestMariaDb.query(jdbcUrl("mariadb", ""), sql);
        }

        /** Runs one SQL statement in this database. */
        public void execute(String sql) {
            TestMariaDb.execute(jdbcUrl("mariadb", ""), sql);
        }

        @Override
        public void close() {
            TestMariaDb.execute(server.jdbcUrl, "DROP DATABASE IF EXISTS " + name);
        }
    }
}
