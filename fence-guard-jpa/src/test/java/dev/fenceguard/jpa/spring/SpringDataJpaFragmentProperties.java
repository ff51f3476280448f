package dev.fenceguard.jpa.spring;

import dev.fenceguard.jpa.RepositoryWritesProperties;
import dev.fenceguard.jpa.spring.jparepo.Note;
import dev.fenceguard.jpa.spring.jparepo.NoteRepository;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template on {@link FencedJpaRepository}'s update, upsert and tombstone delete, through Spring and Hibernate on real PostgreSQL. */
class SpringDataJpaFragmentProperties extends RepositoryWritesProperties {
    private static final SpringContexts SPRING = SpringContexts.jpa("sdjpaprops", Note.DDL);
    private static final NoteRepository NOTES = SPRING.bean(NoteRepository.class);

    @AfterContainer
    static void close() {
        SPRING.close();
    }

    @Override
    protected void create(String id) {
        NOTES.save(new Note(id, initialValue()));
    }

    @Override
    protected Writes writes() {
        return new Writes((id, fence, value) -> NOTES.fencedUpdate(id, fence, Map.of("body", value)),
                (id, fence, value) -> NOTES.fencedUpsert(id, fence, Map.of("body", value)), NOTES::fencedDelete);
    }

    @Override
    protected Optional<String> read(String id) {
        return NOTES.liveBody(id);
    }
}
