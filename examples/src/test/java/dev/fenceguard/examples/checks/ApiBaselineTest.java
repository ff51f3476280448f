package dev.fenceguard.examples.checks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.examples.checks.ApiDump.Module;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The public surface of every published module is what {@code <module>/api/<module>.api} says: a change to
 * it is deliberate, reviewed as a change to that file. Nothing is released yet, so there is no artifact
 * to compare with (what japicmp needs); the committed dump is the baseline.
 */
class ApiBaselineTest {

    /** The one command that rewrites every dump from the classes just compiled. */
    static final String UPDATE = "./mvnw -q -pl examples -am verify -Dtest=ApiBaselineTest "
            + "-Dsurefire.failIfNoSpecifiedTests=false -Dfenceguard.api.update=true";

    @Test
    void everyPublishedModuleHasTheApiOfItsBaselineFile() throws Exception {
        Map<String, Module> modules = ApiDump.modulesOnClassPath();
        assertThat(modules.keySet()).as("published modules (folders with src/main/java/module-info.java) must be test "
                + "dependencies of examples, so that their API is checked").containsExactlyInAnyOrderElementsOf(ApiDump.publishedFolders());

        boolean update = Boolean.getBoolean("fenceguard.api.update");
        List<String> changed = new ArrayList<>();
        for (Module m : modules.values()) {
            String now = ApiDump.dump(m);
            String baseline = Files.exists(m.dumpFile()) ? Files.readString(m.dumpFile()) : "";
            if (now.equals(baseline)) {
                continue;
            }
            if (update) {
                Files.createDirectories(m.dumpFile().getParent());
                Files.writeString(m.dumpFile(), now);
            } else {
                changed.add(Samples.ROOT.relativize(m.dumpFile()) + (baseline.isEmpty() ? " is missing" : " differs:")
                        + "\n" + diff(baseline, now));
            }
        }
        assertThat(changed).as("""
                The public API differs from its baseline (- baseline, + now). If the change is meant, rewrite the \
                baselines and commit them with it:
                    %s""", UPDATE).isEmpty();
    }

    @Test
    void theDiffNamesTheTypeAndTheLines() {
        String before = "# module m\n\npublic class a.B {\n  public void x();\n}\n\npublic class a.C {\n}\n";
        String after = "# module m\n\npublic class a.B {\n  public void y();\n}\n\npublic class a.C {\n}\n";
        assertThat(diff(before, after)).isEqualTo("  public class a.B {\n  -   public void x();\n  +   public void y();\n");
        assertThat(diff(before, before)).isEmpty();
    }

    /** Per type (a block starting with a non-indented line), the lines that went and came. */
    static String diff(String baseline, String now) {
        Map<String, List<String>> was = blocks(baseline);
        Map<String, List<String>> is = blocks(now);
        StringBuilder out = new StringBuilder();
        for (String header : new TreeSet<>(union(was.keySet(), is.keySet()))) {
            List<String> a = was.get(header);
            List<String> b = is.get(header);
            if (a == null) {
                out.append("  + ").append(header).append(" (new)\n");
                continue;
            }
            if (b == null) {
                out.append("  - ").append(header).append(" (gone)\n");
                continue;
            }
            List<String> gone = new ArrayList<>(a);
            b.forEach(gone::remove);
            List<String> came = new ArrayList<>(b);
            a.forEach(came::remove);
            if (!gone.isEmpty() || !came.isEmpty()) {
                out.append("  ").append(header).append('\n');
                gone.forEach(l -> out.append("  - ").append(l).append('\n'));
                came.forEach(l -> out.append("  + ").append(l).append('\n'));
            }
        }
        return out.toString();
    }

    private static TreeSet<String> union(java.util.Set<String> a, java.util.Set<String> b) {
        TreeSet<String> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }

    private static Map<String, List<String>> blocks(String dump) {
        Map<String, List<String>> blocks = new LinkedHashMap<>();
        List<String> current = null;
        for (String line : dump.lines().toList()) {
            if (line.isBlank() || line.equals("}")) {
                continue;
            }
            if (!line.startsWith(" ")) {
                current = new ArrayList<>();
                blocks.put(line, current);
            } else if (current != null) {
                current.add(line);
            }
        }
        return blocks;
    }
}
