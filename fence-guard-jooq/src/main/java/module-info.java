/**
 * fence-guard's fenced SQL writes built with jOOQ: {@link dev.fenceguard.jooq.FencedTable} and its
 * {@link dev.fenceguard.jooq.FencedWriter}, on PostgreSQL, MariaDB and MySQL. The lock backends are in
 * fence-guard-jdbc, which needs no jOOQ.
 *
 * @since 0.1
 */
module dev.fenceguard.jooq {
    requires transitive dev.fenceguard.core;
    requires dev.fenceguard.jdbc;
    requires transitive java.sql;
    requires transitive org.jooq;

    exports dev.fenceguard.jooq;
}
