/**
 * fence-guard's test kit: the backend contract suites, jqwik property templates, test helpers and the
 * test-server harness. Testcontainers, embedded PostgreSQL and pgjdbc are optional.
 *
 * @since 0.1
 */
module dev.fenceguard.testkit {
    requires transitive dev.fenceguard.core;
    requires transitive java.sql;
    requires transitive net.jqwik.api;
    requires transitive org.junit.jupiter.api;
    requires transitive org.junit.jupiter.params;
    requires org.assertj.core;
    requires java.net.http;
    requires java.naming; // pgjdbc's data sources are Referenceable
    requires static org.postgresql.jdbc;
    requires static org.mariadb.jdbc;
    requires static embedded.postgres;
    requires static testcontainers;

    exports dev.fenceguard.testkit;
    exports dev.fenceguard.testkit.servers;
}
