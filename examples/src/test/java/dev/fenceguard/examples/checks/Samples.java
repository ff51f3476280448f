package dev.fenceguard.examples.checks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Finds the code samples of the project's documents and the marked regions of the sources that run them.
 *
 * <p>A sample is a {@code ```java} block of README.md, docs/*.md or a module's README.md, or a {@code <pre>}
 * block in the Javadoc of a published module's main sources. A region is the text between
 * {@code // <document>: <name> (begin)} and {@code // <document>: <name> (end)} in a source under
 * {@link #SAMPLE_ROOTS}, where the document is {@code README.md}, {@code docs/x.md}, a module's
 * {@code fence-guard-x/README.md} or a Javadoc'd source's path below {@code src/main/java}. A sample
 * that is not Java meant to compile says so on the line above it: {@code <!-- not compiled: reason -->}.
 */
final class Samples {

    private Samples() {}

    /** The repository root: the examples module's tests run in {@code examples/}. */
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /**
     * Where the sources that hold regions are: compiled and run by these modules' tests. The testkit's
     * tests are here for the one sample that is a whole file ({@code com/example/orders/OrderShippingTest.java},
     * shown by the testkit's README, whose first and last lines are its markers).
     */
    static final List<String> SAMPLE_ROOTS = List.of("examples/src/main/java", "examples/src/test/java",
            "examples-spring-boot/src/main/java", "examples-spring-boot/src/test/java", "fence-guard-testkit/src/test/java");

    /** One sample: where it is (document and 1-based line of its opening fence) and its code. */
    record Sample(String document, int line, String code, boolean compiled) {
        String where() {
            return document + ":" + line;
        }

        String firstLine() {
            return code.lines().filter(l -> !l.isBlank()).findFirst().orElse("").strip();
        }
    }

    /** One marked region of a sample source. */
    record Region(String document, String name, Path source, int line, String code) {
        String where() {
            return ROOT.relativize(source) + ":" + line;
        }
    }

    private static final Pattern NOT_COMPILED = Pattern.compile("<!--\\s*not compiled:\\s*\\S.*-->");
    private static final Pattern FENCE_OPEN = Pattern.compile("^\\s*```java\\s*$");
    private static final Pattern FENCE_CLOSE = Pattern.compile("^\\s*```\\s*$");
    private static final Pattern MARKER = Pattern.compile("^\\s*// (\\S+): (.+) \\((begin|end)\\)\\s*$");

    /**
     * The {@code ```java} blocks of README.md, docs/*.md and every module's README.md (a folder with a
     * pom.xml); the document is the path from the repository root, e.g. {@code fence-guard-testkit/README.md}.
     */
    static List<Sample> markdownSamples() {
        List<Path> docs = new ArrayList<>();
        docs.add(ROOT.resolve("README.md"));
        list(ROOT.resolve("docs")).stream().filter(p -> p.toString().endsWith(".md")).forEach(docs::add);
        list(ROOT).stream().filter(m -> Files.exists(m.resolve("pom.xml"))).map(m -> m.resolve("README.md"))
                .filter(Files::exists).forEach(docs::add);
        List<Sample> samples = new ArrayList<>();
        for (Path doc : docs) {
            List<String> lines = lines(doc);
            String name = ROOT.relativize(doc).toString().replace('\\', '/');
            for (int i = 0; i < lines.size(); i++) {
                if (!FENCE_OPEN.matcher(lines.get(i)).matches()) {
                    continue;
                }
                int open = i;
                List<String> code = new ArrayList<>();
                for (i++; i < lines.size() && !FENCE_CLOSE.matcher(lines.get(i)).matches(); i++) {
                    code.add(lines.get(i));
                }
                samples.add(new Sample(name, open + 1, normalise(code), !optedOut(lines, open, l -> l)));
            }
        }
        return samples;
    }

    /**
     * The {@code <pre>} blocks in the Javadoc of every published module (a folder with
     * {@code src/main/java/module-info.java}), internal packages left out; the document is the source's
     * path below src/main/java.
     */
    static List<Sample> javadocSamples() {
        List<Sample> samples = new ArrayList<>();
        for (Path main : publishedMainSourceRoots()) {
            try (Stream<Path> files = Files.walk(main)) {
                // internal packages are not exported: their Javadoc is not published
                for (Path source : files.filter(p -> p.toString().endsWith(".java") && !p.toString().contains("/internal/"))
                        .sorted().toList()) {
                    samples.addAll(javadocSamples(main.relativize(source).toString().replace('\\', '/'), lines(source)));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return samples;
    }

    static List<Path> publishedMainSourceRoots() {
        return list(ROOT).stream().map(m -> m.resolve("src/main/java")).filter(m -> Files.exists(m.resolve("module-info.java")))
                .toList();
    }

    /** The entries of {@code dir}, sorted. */
    private static List<Path> list(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final Pattern COMMENT_LINE = Pattern.compile("^\\s*\\*(?: ?)(.*)$");

    static List<Sample> javadocSamples(String document, List<String> lines) {
        List<Sample> samples = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String text = javadocText(lines.get(i));
            if (text == null || !text.stripLeading().startsWith("<pre>")) {
                continue;
            }
            int open = i;
            String first = text.stripLeading().substring("<pre>".length());
            boolean literal = first.startsWith("{@code");
            List<String> code = new ArrayList<>();
            String rest = literal ? first.substring("{@code".length()) : first;
            for (String line = rest; ; line = javadocText(lines.get(++i))) {
                int close = line.indexOf("</pre>");
                if (close >= 0) {
                    String last = line.substring(0, close);
                    if (literal) {
                        last = last.substring(0, last.lastIndexOf('}'));
                    }
                    code.add(last);
                    break;
                }
                code.add(line);
                if (i + 1 >= lines.size()) {
                    throw new IllegalStateException(document + ":" + (open + 1) + ": <pre> without </pre>");
                }
            }
            String joined = code.stream().map(l -> literal ? l : unescape(l)).map(l -> l.replace("&#64;", "@"))
                    .collect(Collectors.joining("\n"));
            samples.add(new Sample(document, open + 1, normalise(joined.lines().toList()),
                    !optedOut(lines, open, Samples::javadocText)));
        }
        return samples;
    }

    /** The text of a Javadoc line after its leading {@code *}, or null if it is not one. */
    private static String javadocText(String line) {
        Matcher m = COMMENT_LINE.matcher(line);
        return m.matches() ? m.group(1) : null;
    }

    private static String unescape(String html) {
        return html.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    }

    private static boolean optedOut(List<String> lines, int open, java.util.function.UnaryOperator<String> text) {
        for (int i = open - 1; i >= 0; i--) {
            String t = text.apply(lines.get(i));
            if (t == null) {
                return false;
            }
            if (!t.isBlank()) {
                return NOT_COMPILED.matcher(t).find();
            }
        }
        return false;
    }

    /** Every marked region under {@link #SAMPLE_ROOTS}. */
    static List<Region> regions() {
        List<Region> regions = new ArrayList<>();
        for (String root : SAMPLE_ROOTS) {
            Path dir = ROOT.resolve(root);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path source : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    regions.addAll(regions(source, lines(source)));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return regions;
    }

    static List<Region> regions(Path source, List<String> lines) {
        List<Region> regions = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher begin = MARKER.matcher(lines.get(i));
            if (!begin.matches() || !begin.group(3).equals("begin")) {
                continue;
            }
            int open = i;
            List<String> code = new ArrayList<>();
            for (i++; ; i++) {
                if (i >= lines.size()) {
                    throw new IllegalStateException(ROOT.relativize(source) + ":" + (open + 1) + ": no '// " + begin.group(1)
                            + ": " + begin.group(2) + " (end)' after this marker");
                }
                Matcher end = MARKER.matcher(lines.get(i));
                if (end.matches()) {
                    if (!end.group(3).equals("end") || !end.group(1).equals(begin.group(1)) || !end.group(2).equals(begin.group(2))) {
                        throw new IllegalStateException(ROOT.relativize(source) + ":" + (i + 1) + ": expected '// " + begin.group(1)
                                + ": " + begin.group(2) + " (end)' (regions do not nest), found: " + lines.get(i).strip());
                    }
                    break;
                }
                code.add(lines.get(i));
            }
            regions.add(new Region(begin.group(1), begin.group(2), source, open + 1, normalise(code)));
        }
        return regions;
    }

    /**
     * The lines without their common indentation and trailing blanks, and without blank lines at either
     * end, joined by {@code \n}: what "the same code" means when a sample is compared with a region.
     */
    static String normalise(List<String> lines) {
        List<String> stripped = lines.stream().map(String::stripTrailing).collect(Collectors.toCollection(ArrayList::new));
        while (!stripped.isEmpty() && stripped.get(0).isEmpty()) {
            stripped.remove(0);
        }
        while (!stripped.isEmpty() && stripped.get(stripped.size() - 1).isEmpty()) {
            stripped.remove(stripped.size() - 1);
        }
        int indent = stripped.stream().filter(l -> !l.isEmpty()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return stripped.stream().map(l -> l.isEmpty() ? "" : l.substring(indent)).collect(Collectors.joining("\n"));
    }

    /**
     * True if {@code region} holds {@code sample}'s lines, one after the other, each whole, all indented
     * alike by some number of spaces (a sample may show the body of a method that the region holds).
     */
    static boolean contains(String region, String sample) {
        String haystack = "\n" + region + "\n";
        for (String indent = ""; indent.length() <= 40; indent += " ") {
            String prefix = indent;
            String shifted = sample.lines().map(l -> l.isEmpty() ? "" : prefix + l).collect(Collectors.joining("\n"));
            if (haystack.contains("\n" + shifted + "\n")) {
                return true;
            }
        }
        return false;
    }

    static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
