/**
 * fence-guard on PostgreSQL: the lock backend and fenced SQL writes built with jOOQ.
 *
 * @since 0.1
 */
module dev.fenceguard.jdbc {
    requires transitive dev.fenceguard.core;
    requires transitive java.sql;
    // pgjdbc's data sources implement javax.naming.Referenceable, and pgjdbc, an automatic module, cannot
    // ask for java.naming itself: without this an application on the module path fails to load them.
    requires java.naming;
    requires transitive org.jooq;
    requires org.postgresql.jdbc;
    requires org.slf4j;

    exports dev.fenceguard.jdbc;
}
