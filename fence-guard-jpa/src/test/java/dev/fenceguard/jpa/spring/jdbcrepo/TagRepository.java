package dev.fenceguard.jpa.spring.jdbcrepo;

import dev.fenceguard.jpa.spring.FencedJdbcRepository;
import java.util.Optional;
import org.springframework.data.jdbc.repository.query.Query;
import org.springframework.data.repository.CrudRepository;

/** An ordinary Spring Data JDBC repository with a read that leaves out tombstones, plus the fenced writes. */
public interface TagRepository extends CrudRepository<Tag, String>, FencedJdbcRepository<Tag, String> {

    @Query("SELECT label FROM tags WHERE id = :id AND deleted IS NOT TRUE")
    Optional<String> liveLabel(String id);
}
