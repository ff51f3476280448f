package dev.fenceguard.jpa;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Set;

/**
 * The fenced-resource template over a path that offers fenced update, upsert and tombstone delete of one
 * text value: each subclass names its writes once, as {@link Writes}.
 */
public abstract class RepositoryWritesProperties extends FencedResourceProperties {

    /** A write of one text value. */
    public interface ValueWrite {
        WriteOutcome apply(String id, FenceToken fence, String value);
    }

    /** A delete. */
    public interface Delete {
        WriteOutcome apply(String id, FenceToken fence);
    }

    /** The three writes of the path under test. */
    public record Writes(ValueWrite update, ValueWrite upsert, Delete delete) {}

    /** The path under test. */
    protected abstract Writes writes();

    @Override
    protected final WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return writes().update().apply(id, fence, value);
    }

    @Override
    protected final WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) {
        return writes().upsert().apply(id, fence, value);
    }

    @Override
    protected final WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return writes().delete().apply(id, fence);
    }

    @Override
    protected final Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }
}
