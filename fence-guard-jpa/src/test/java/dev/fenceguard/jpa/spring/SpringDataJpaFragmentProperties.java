package dev.fenceguard.jpa.spring;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jpa.spring.jparepo.Note;
import dev.fenceguard.jpa.spring.jparepo.NoteRepository;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template on {@link FencedJpaRepository}'s update, upsert and tombstone delete, through Spring and Hibernate on real PostgreSQL. */
class SpringDataJpaFragmentProperties extends FencedResourceProperties {
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
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return NOTES.fencedUpdate(id, fence, Map.of("body", value));
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) {
        return NOTES.fencedUpsert(id, fence, Map.of("body", value));
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return NOTES.fencedDelete(id, fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }

    @Override
    protected Optional<String> read(String id) {
        return NOTES.liveBody(id);
    }
}
