/**
 * fence-guard on SQL databases through plain JDBC: the lock, idempotency and flight backends for
 * PostgreSQL, MariaDB and MySQL, handed out by {@link dev.fenceguard.jdbc.FenceGuardJdbc}. It needs no
 * jOOQ and no particular driver: the application brings its JDBC driver.
 *
 * @since 0.1
 */
module dev.fenceguard.jdbc {
    requires transitive dev.fenceguard.core;
    requires transitive java.sql;
    // pgjdbc's data sources implement javax.naming.Referenceable, and pgjdbc, an automatic module, cannot
    // ask for java.naming itself: without this an application on the module path fails to load them.
    requires java.naming;
    // The driver is the application's choice. pgjdbc is read only where a PostgreSQL server's error
    // fields are mapped and where the flight store LISTENs, and only when pgjdbc is the driver in use.
    requires static org.postgresql.jdbc;
    requires org.slf4j;

    exports dev.fenceguard.jdbc;
    // Dialect detection and error mapping, shared with the fenced writes; never an API.
    exports dev.fenceguard.jdbc.internal to dev.fenceguard.jooq;
}
