/**
 * fence-guard on JPA: fenced entity writes through Hibernate, and fenced repository fragments for
 * Spring Data JPA and Spring Data JDBC. Spring Data and fence-guard-jooq are optional: read only when
 * the application's module graph has them.
 *
 * @since 0.1
 */
module dev.fenceguard.jpa {
    requires transitive dev.fenceguard.core;
    requires transitive jakarta.persistence;
    requires transitive java.sql;
    requires org.hibernate.orm.core;

    // The repository fragments, each used only by applications that have the matching Spring Data.
    requires static spring.beans;
    requires static spring.data.commons;
    requires static spring.data.relational;
    requires static spring.jdbc;
    requires static spring.tx;
    // Spring Data JDBC writes go through fence-guard-jooq.
    requires static dev.fenceguard.jooq;
    requires static org.jooq;

    exports dev.fenceguard.jpa;
    exports dev.fenceguard.jpa.spring;
    // The fragments' implementations, named in META-INF/spring.factories: Spring (spring.beans)
    // instantiates them and Spring Data (spring.data.commons) calls their public methods reflectively.
    // Never an API.
    exports dev.fenceguard.jpa.internal to spring.beans, spring.data.commons;
}
