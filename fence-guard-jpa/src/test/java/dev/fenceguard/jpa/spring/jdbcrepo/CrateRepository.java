package dev.fenceguard.jpa.spring.jdbcrepo;

import dev.fenceguard.jpa.spring.FencedJdbcRepository;
import org.springframework.data.repository.CrudRepository;

/** An ordinary Spring Data JDBC repository that adds the fenced writes. */
public interface CrateRepository extends CrudRepository<Crate, Long>, FencedJdbcRepository<Crate, Long> {}
