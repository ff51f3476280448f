package dev.fenceguard.testkit;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * Runs the template's meta-tests once and exits 0 only if all of them passed: each broken fixture was
 * caught and each correct one passed. {@code scripts/check-race-template.sh} runs this many times in a
 * row, each in a fresh working directory (so with no jqwik database to replay), with both cores busy.
 */
public final class RaceTemplateCheck {

    private RaceTemplateCheck() {}

    public static void main(String[] args) {
        EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(FencedResourceTemplateTest.class)).execute();
        var tests = results.testEvents();
        tests.failed().stream().forEach(e -> System.out.println("FAILED " + e.getTestDescriptor().getDisplayName() + ": "
                + e.getRequiredPayload(TestExecutionResult.class).getThrowable().map(Throwable::toString).orElse("?")));
        System.out.println("meta-tests: started=" + tests.started().count() + " succeeded=" + tests.succeeded().count()
                + " failed=" + tests.failed().count());
        System.exit(tests.started().count() > 0 && tests.failed().count() == 0 && tests.succeeded().count() == tests.started().count() ? 0 : 1);
    }
}
