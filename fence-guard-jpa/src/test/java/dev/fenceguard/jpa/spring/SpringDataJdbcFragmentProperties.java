package dev.fenceguard.jpa.spring;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jpa.spring.jdbcrepo.Tag;
import dev.fenceguard.jpa.spring.jdbcrepo.TagRepository;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template on {@link FencedJdbcRepository}'s update, upsert and tombstone delete ({@code FencedTable}), through Spring on real PostgreSQL. */
class SpringDataJdbcFragmentProperties extends FencedResourceProperties {
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
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return TAGS.fencedUpdate(id, fence, Map.of("label", value));
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) {
        return TAGS.fencedUpsert(id, fence, Map.of("label", value));
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return TAGS.fencedDelete(id, fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }

    @Override
    protected Optional<String> read(String id) {
        return TAGS.liveLabel(id);
    }
}
