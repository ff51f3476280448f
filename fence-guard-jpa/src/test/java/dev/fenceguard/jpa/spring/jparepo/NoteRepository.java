package dev.fenceguard.jpa.spring.jparepo;

import dev.fenceguard.jpa.spring.FencedJpaRepository;
import java.util.Optional;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;

/** An ordinary repository with a read that leaves out tombstones, plus the fenced writes. */
public interface NoteRepository extends JpaRepository<Note, String>, FencedJpaRepository<Note, String> {

    @Query("select n.body from Note n where n.id = :id and (n.deleted is null or n.deleted = false)")
    Optional<String> liveBody(String id);
}
