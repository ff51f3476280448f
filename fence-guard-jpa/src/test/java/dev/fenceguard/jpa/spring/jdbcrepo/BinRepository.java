package dev.fenceguard.jpa.spring.jdbcrepo;

import dev.fenceguard.jpa.spring.FencedJdbcRepository;
import org.springframework.data.repository.CrudRepository;

/** A repository whose fenced writes are refused (see {@link Bin}). */
public interface BinRepository extends CrudRepository<Bin, Long>, FencedJdbcRepository<Bin, Long> {}
