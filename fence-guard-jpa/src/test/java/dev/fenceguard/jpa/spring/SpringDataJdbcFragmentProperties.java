package dev.fenceguard.jpa.spring;

import dev.fenceguard.jpa.RepositoryWritesProperties;
import dev.fenceguard.jpa.spring.jdbcrepo.Tag;
import dev.fenceguard.jpa.spring.jdbcrepo.TagRepository;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template on {@link FencedJdbcRepository}'s update, upsert and tombstone delete ({@code FencedTable}), through Spring on real PostgreSQL. */
class SpringDataJdbcFragmentProperties extends RepositoryWritesProperties {
    private static final SpringContexts SPRING = SpringContexts.jdbc("sdjdbcprops", Tag.DDL);
    private static final TagRepository TAGS = SPRING.bean(TagRepository.class);

    @AfterContainer
    static void close() {
        SPRING.close();
    }

    @Override
    protected void create(String id) {
        SPRING.schema.execute("INSERT INTO " + SPRING.schema.name() + ".tags (id, label) VALUES ('" + id + "', '" + initialValue() + "')");
    }

    @Override
    protected Writes writes() {
        return new Writes((id, fence, value) -> TAGS.fencedUpdate(id, fence, Map.of("label", value)),
                (id, fence, value) -> TAGS.fencedUpsert(id, fence, Map.of("label", value)), TAGS::fencedDelete);
    }

    @Override
    protected Optional<String> read(String id) {
        return TAGS.liveLabel(id);
    }
}
