package dev.fenceguard.examples.checks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.examples.checks.Samples.Region;
import dev.fenceguard.examples.checks.Samples.Sample;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every code sample of README.md, docs/*.md, the modules' READMEs and the published Javadoc is code that
 * compiles and runs: it is, word for word (up to indentation), in a marked region of a source that the
 * examples' tests run (or, for the testkit README's runnable example, the testkit's). How to add one:
 * put the code in a class under {@code examples/src/test/java/.../examples/docs/} (or the examples' main
 * sources) between {@code // docs/x.md: <name> (begin)} and {@code // docs/x.md: <name> (end)}, and call
 * it from a test of that package.
 *
 * <p>Javadoc samples are checked here rather than turned into {@code {@snippet class=... region=...}}: a
 * snippet's text lives outside the source, so a reader of the source or of an IDE's hover sees only the
 * reference, the javadoc tool would need a snippet path into the examples module (which depends on the
 * published modules it documents), and javac's doclint does not check external snippets. One rule for
 * every sample (the text is in the document, the code that runs is in a region) keeps it simple.
 */
class SamplesTest {

    /**
     * Samples written before this check, whose code no region holds yet: {@code <document> | <first line>}.
     * The list only shrinks: a sample not on it must be covered, and an entry that names a sample that is
     * covered (or gone) fails too, so that the entry is deleted with the change that covers it.
     */
    static final Path UNCOVERED = Path.of("src/test/resources/samples-not-yet-covered.txt");

    /**
     * Rewrites {@link #UNCOVERED} with the samples no region holds now (for a merge that changed many
     * documents at once; the diff of the list shows what it let in, and is reviewed as such).
     */
    static final String UPDATE = "./mvnw -q -pl examples -am verify -Dtest=SamplesTest "
            + "-Dsurefire.failIfNoSpecifiedTests=false -Dfenceguard.samples.update=true";

    @Test
    void everySampleIsInARegionOfCodeThatRuns() throws Exception {
        List<Sample> samples = new ArrayList<>(Samples.markdownSamples());
        samples.addAll(Samples.javadocSamples());
        List<Region> regions = Samples.regions();
        Set<String> allowed = new LinkedHashSet<>(uncoveredEntries());

        List<String> missing = new ArrayList<>();
        Set<String> stillListed = new LinkedHashSet<>();
        Set<String> uncovered = new LinkedHashSet<>();
        for (Sample s : samples) {
            if (!s.compiled()) {
                continue;
            }
            boolean covered = regions.stream().anyMatch(r -> r.document().equals(s.document()) && Samples.contains(r.code(), s.code()));
            String entry = s.document() + " | " + s.firstLine();
            if (covered) {
                continue;
            }
            uncovered.add(entry);
            if (allowed.contains(entry)) {
                stillListed.add(entry);
            } else {
                missing.add(s.where() + ": this sample is in no '// " + s.document() + ": <name> (begin)' region of "
                        + Samples.SAMPLE_ROOTS + "; the code nearest to it is\n" + nearest(s, regions) + "\n----- sample:\n" + s.code());
            }
        }
        if (Boolean.getBoolean("fenceguard.samples.update")) {
            List<String> header = Files.readAllLines(UNCOVERED).stream().filter(l -> l.startsWith("#")).toList();
            List<String> list = new ArrayList<>(header);
            list.addAll(uncovered);
            Files.write(UNCOVERED, list);
            return;
        }
        assertThat(missing).as("""
                Samples that no marked region holds, word for word up to indentation. Copy the sample into a \
                region of a class that a test runs (see %s), or fix the document to show the code that runs; a \
                block that is not Java meant to compile gets '<!-- not compiled: reason -->' on the line above it. \
                (Only to accept them as not yet covered: %s)""",
                getClass().getSimpleName(), UPDATE).isEmpty();

        Set<String> stale = new LinkedHashSet<>(allowed);
        stale.removeAll(stillListed);
        assertThat(stale).as("entries of %s that name no uncovered sample any more (covered, or gone): delete them, or run %s",
                UNCOVERED, UPDATE).isEmpty();
    }

    @Test
    void everyRegionIsShownByItsDocument() {
        List<Sample> samples = new ArrayList<>(Samples.markdownSamples());
        samples.addAll(Samples.javadocSamples());
        List<String> unused = Samples.regions().stream()
                .filter(r -> samples.stream().noneMatch(s -> s.document().equals(r.document()) && Samples.contains(r.code(), s.code())))
                .map(r -> r.where() + ": region '" + r.document() + ": " + r.name() + "' holds no sample of " + r.document())
                .toList();
        assertThat(unused).as("regions whose document no longer shows them: update the document or delete the markers").isEmpty();
    }

    @Test
    void theCheckFindsSamplesRegionsAndOptOuts() {
        List<Sample> javadoc = Samples.javadocSamples("x/Y.java", List.of(
                "/**", " * Text.", " * <pre>{@code", " *     a(b -> c);", " * }</pre>",
                " * <!-- not compiled: a shell command -->", " * <pre>", " * ./mvnw &lt;args&gt;", " * </pre>", " */"));
        assertThat(javadoc).containsExactly(new Sample("x/Y.java", 3, "a(b -> c);", true),
                new Sample("x/Y.java", 7, "./mvnw <args>", false));

        List<Region> regions = Samples.regions(Path.of("Z.java"), List.of(
                "class Z {", "    void m() {", "        // x/Y.java: lambda (begin)", "        if (x) {", "            a(b -> c);",
                "        }", "        // x/Y.java: lambda (end)", "    }", "}"));
        assertThat(regions).singleElement().satisfies(r -> {
            assertThat(r.name()).isEqualTo("lambda");
            assertThat(r.code()).isEqualTo("if (x) {\n    a(b -> c);\n}");
            assertThat(Samples.contains(r.code(), "a(b -> c);")).isTrue();
            assertThat(Samples.contains(r.code(), "a(b -> d);")).isFalse();
            assertThat(Samples.contains(r.code(), "a(b")).as("whole lines only").isFalse();
        });
    }

    private static String nearest(Sample s, List<Region> regions) {
        String first = s.firstLine();
        return regions.stream().filter(r -> r.code().contains(first)).findFirst()
                .map(r -> r.where() + " (" + r.document() + ": " + r.name() + ")").orElse("(no region has its first line)");
    }

    private static List<String> uncoveredEntries() throws Exception {
        if (!Files.exists(UNCOVERED)) {
            return List.of();
        }
        try (Stream<String> lines = Files.lines(UNCOVERED)) {
            return lines.map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        }
    }
}
