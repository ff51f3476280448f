/**
 * fence-guard's Flyway migrations: the lock tables and fence columns for existing tables. Flyway's jars
 * have no module names of their own; the name below is derived from the jar file name.
 *
 * @since 0.1
 */
module dev.fenceguard.migrations {
    requires transitive dev.fenceguard.core;
    requires transitive java.sql;
    // pgjdbc's data sources implement javax.naming.Referenceable, and pgjdbc, an automatic module, cannot
    // ask for java.naming itself: without this an application on the module path fails to load them.
    requires java.naming;
    requires transitive flyway.core;

    exports dev.fenceguard.migrations;
}
