package dev.fenceguard.examples.docs;

import static dev.fenceguard.examples.docs.ContractFixtures.repo;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.Optional;

/** The sample of {@link FencedResourceProperties}' Javadoc: a repository's fenced status update against the write rule. */
// dev/fenceguard/testkit/FencedResourceProperties.java: subclass (begin)
class OrderWriterProperties extends FencedResourceProperties {
    protected void create(String id) { repo.insert(id, "initial"); }
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return repo.updateStatus(id, value, fence);           // your fenced write
    }
    protected Optional<String> read(String id) { return repo.status(id); }
}
// dev/fenceguard/testkit/FencedResourceProperties.java: subclass (end)
