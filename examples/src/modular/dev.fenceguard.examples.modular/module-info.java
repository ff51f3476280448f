/** A modular application using fence-guard on PostgreSQL and Redis; compiled and run on the module path by ModulePathTest. */
module dev.fenceguard.examples.modular {
    requires dev.fenceguard.jdbc;
    requires dev.fenceguard.jooq;
    requires dev.fenceguard.redis;
    requires org.postgresql.jdbc;
}
