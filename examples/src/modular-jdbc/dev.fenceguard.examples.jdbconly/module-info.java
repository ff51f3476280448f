/**
 * A modular application that takes locks with fence-guard-jdbc alone: no jOOQ on its module path, and no
 * driver but the one of its database, found by the JDK's service loader. Compiled and run by ModulePathTest.
 */
module dev.fenceguard.examples.jdbconly {
    requires dev.fenceguard.jdbc;
}
