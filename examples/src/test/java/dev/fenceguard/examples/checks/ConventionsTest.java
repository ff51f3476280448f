package dev.fenceguard.examples.checks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The conventions of docs/api.md that a machine can check, over the public API of every published module
 * (read from the compiled classes, as {@link ApiDump} prints it). A rule that fails here is a change to
 * docs/api.md first.
 */
class ConventionsTest {

    /** One public or protected method of a public type: the type's binary name, the method and its parameter types. */
    record Method(String type, String name, List<String> parameters, String line) {
        String simpleType() {
            return type.substring(Math.max(type.lastIndexOf('.'), type.lastIndexOf('$')) + 1);
        }

        @Override
        public String toString() {
            return type + ": " + line.strip();
        }
    }

    private static List<String> types;
    private static List<Method> methods;

    @BeforeAll
    static void readTheApi() {
        types = new ArrayList<>();
        methods = new ArrayList<>();
        for (ApiDump.Module m : ApiDump.modulesOnClassPath().values()) {
            parse(ApiDump.dump(m), types, methods);
        }
        assertThat(types).as("public types read from the published modules").isNotEmpty();
    }

    /** Feature packages of core; their types live there, not in the root package. */
    static final List<String> FEATURE_PREFIXES = List.of("Idempotency", "Singleflight", "Leader", "Flight");

    @Test
    void noTypeOfAFeaturePackageIsInTheCoreRoot() {
        assertThat(featureTypesInCoreRoot(types)).as("types of dev.fenceguard.core whose name belongs to a feature package "
                + "(docs/api.md, Packages): move them to dev.fenceguard.core.idempotency, .singleflight or .leader").isEmpty();
    }

    static List<String> featureTypesInCoreRoot(List<String> types) {
        return types.stream().filter(t -> t.startsWith("dev.fenceguard.core.") && t.lastIndexOf('.') == "dev.fenceguard.core".length())
                .filter(t -> !t.contains("$"))   // a nested type moves with the type around it
                .filter(t -> FEATURE_PREFIXES.stream().anyMatch(p -> t.substring("dev.fenceguard.core.".length()).startsWith(p)))
                .toList();
    }

    /** The fenced writes: what docs/api.md's argument-order table lists, and the repository fragments' fenced* forms. */
    static final Set<String> WRITES = Set.of("update", "set", "hset", "claim", "delete", "upsert", "eval", "check", "save", "put");

    @Test
    void everyFencedWriteTakesTheFenceRightAfterItsTarget() {
        assertThat(fenceOutOfPlace(methods)).as("fenced writes whose FenceToken is not right after the target (after a "
                + "Transaction when it comes first; after the keys of eval): docs/api.md, Argument order").isEmpty();
    }

    static List<Method> fenceOutOfPlace(List<Method> methods) {
        return methods.stream().filter(m -> m.simpleType().contains("Fenced")).filter(m -> WRITES.contains(writeName(m.name())))
                .filter(m -> m.parameters().stream().anyMatch(ConventionsTest::isFence))
                // a callback given only the fence (testkit's FencedCounter.claim(fence)) has no target to come after
                .filter(m -> m.parameters().size() > 1)
                .filter(m -> {
                    int at = 1;
                    if (!m.parameters().isEmpty() && m.parameters().get(0).endsWith("Transaction")) {
                        at++;
                    }
                    if (writeName(m.name()).equals("eval")) {
                        at++;   // eval(script, keys, fence, args): the keys are the target
                    }
                    return m.parameters().size() <= at || !isFence(m.parameters().get(at));
                })
                .toList();
    }

    /** {@code fencedUpdate} (a repository fragment) is the write {@code update}. */
    private static String writeName(String method) {
        return method.startsWith("fenced") && method.length() > 6
                ? Character.toLowerCase(method.charAt(6)) + method.substring(7) : method;
    }

    private static boolean isFence(String parameter) {
        return parameter.equals("dev.fenceguard.core.FenceToken");
    }

    @Test
    void everyTimeoutSettingIsWithCallTimeout() {
        assertThat(otherTimeoutSettings(methods)).as("timeout settings not named withCallTimeout: docs/api.md, One timeout name")
                .isEmpty();
    }

    /**
     * Timeout settings that are not about one call to a store, each with the reason it keeps its own name.
     * {@code type#method}.
     */
    static final Set<String> OTHER_TIMEOUTS = Set.of(
            // PostgreSQL's lock_timeout for the migration's ALTER TABLE: how long DDL waits for the table lock
            "dev.fenceguard.migrations.FenceColumn#withLockTimeout",
            // The bound of Lease.close() and of the end of withLock: a release runs in finally blocks and on
            // shutdown, so it has its own, shorter bound (2 s) than the calls that acquire (10 s)
            "dev.fenceguard.core.LockClient$Builder#withReleaseTimeout");

    static List<Method> otherTimeoutSettings(List<Method> methods) {
        return methods.stream().filter(m -> m.name().startsWith("with") && m.name().endsWith("Timeout"))
                .filter(m -> !m.name().equals("withCallTimeout"))
                .filter(m -> !OTHER_TIMEOUTS.contains(m.type() + "#" + m.name())).toList();
    }

    /**
     * No {@code @since} names a version later than the one being built: Javadoc cannot promise an API to a
     * release that has not been cut (docs/api.md, Versions). Read from the sources: Javadoc is not in the
     * class files.
     */
    @Test
    void noSinceIsLaterThanThePomsVersion() throws Exception {
        String pom = Files.readString(Samples.ROOT.resolve("pom.xml"));
        Matcher version = Pattern.compile("<artifactId>fence-guard-parent</artifactId>\\s*<version>(\\d+)\\.(\\d+)").matcher(pom);
        assertThat(version.find()).as("the parent's version in pom.xml").isTrue();
        int[] building = {Integer.parseInt(version.group(1)), Integer.parseInt(version.group(2))};
        List<String> later = new ArrayList<>();
        Pattern since = Pattern.compile("@since\\s+(\\d+)\\.(\\d+)");
        for (Path main : Samples.publishedMainSourceRoots()) {
            try (Stream<Path> files = Files.walk(main)) {
                for (Path source : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    List<String> lines = Samples.lines(source);
                    for (int i = 0; i < lines.size(); i++) {
                        Matcher m = since.matcher(lines.get(i));
                        if (m.find() && Arrays.compare(new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))}, building) > 0) {
                            later.add(Samples.ROOT.relativize(source) + ":" + (i + 1) + ": " + lines.get(i).strip());
                        }
                    }
                }
            }
        }
        assertThat(later).as("@since later than %d.%d, the version pom.xml builds", building[0], building[1]).isEmpty();
    }

    /**
     * Every public top-level type of an exported package says in its Javadoc since when it exists
     * ({@code @since 0.1} for everything before the first release: docs/api.md, Versions).
     */
    @Test
    void everyPublicTypeSaysSinceWhen() {
        List<String> without = new ArrayList<>();
        for (ApiDump.Module m : ApiDump.modulesOnClassPath().values()) {
            List<String> moduleTypes = new ArrayList<>();
            parse(ApiDump.dump(m), moduleTypes, new ArrayList<>());
            for (String type : moduleTypes) {
                if (type.contains("$")) {
                    continue;   // a nested type is as old as the type around it, unless it says otherwise
                }
                Path source = Samples.ROOT.resolve(m.folder()).resolve("src/main/java").resolve(type.replace('.', '/') + ".java");
                if (!sinceInTypeJavadoc(Samples.lines(source), type.substring(type.lastIndexOf('.') + 1))) {
                    without.add(Samples.ROOT.relativize(source).toString());
                }
            }
        }
        assertThat(without).as("public types whose Javadoc has no @since (add '@since 0.1' while nothing is released)").isEmpty();
    }

    /** Whether the Javadoc comment before the declaration of {@code simpleName} holds an {@code @since}. */
    static boolean sinceInTypeJavadoc(List<String> lines, String simpleName) {
        Pattern declaration = Pattern.compile("^public (.* )?(class|interface|record|enum|@interface) " + Pattern.quote(simpleName) + "\\b.*");
        for (int i = 0; i < lines.size(); i++) {
            if (declaration.matcher(lines.get(i)).matches()) {
                String before = String.join("\n", lines.subList(0, i));
                int close = before.lastIndexOf("*/");
                int open = before.lastIndexOf("/**");
                // only annotations may stand between the comment and the declaration
                return close > open && open >= 0 && !before.substring(close).contains(";")
                        && before.substring(open, close).contains("@since ");
            }
        }
        return false;
    }

    /** The rules run today and find what #27 is about; this keeps them from passing by reading nothing. */
    @Test
    void theRulesSeeTheApi() {
        assertThat(methods).as("LockClient.withLock in the API read").anyMatch(m -> m.type().equals("dev.fenceguard.core.LockClient")
                && m.name().equals("withLock"));
        List<String> fakeTypes = List.of("dev.fenceguard.core.IdempotencyKey", "dev.fenceguard.core.idempotency.IdempotencyStore",
                "dev.fenceguard.core.Lease");
        assertThat(featureTypesInCoreRoot(fakeTypes)).containsExactly("dev.fenceguard.core.IdempotencyKey");
        assertThat(featureTypesInCoreRoot(List.of("dev.fenceguard.core.IdempotencyKey$Builder"))).isEmpty();
        List<Method> fake = new ArrayList<>();
        parse("""
                public interface dev.fenceguard.redis.FencedRedis {
                  public abstract dev.fenceguard.core.WriteOutcome set(java.lang.String, java.lang.String, dev.fenceguard.core.FenceToken);
                  public abstract dev.fenceguard.core.WriteOutcome set(java.lang.String, dev.fenceguard.core.FenceToken, java.lang.String);
                  public abstract dev.fenceguard.core.WriteOutcome eval(java.lang.String, java.util.List<java.lang.String>, dev.fenceguard.core.FenceToken, java.util.List<java.lang.String>);
                  public abstract dev.fenceguard.core.WriteOutcome update(com.google.cloud.firestore.Transaction, com.google.cloud.firestore.DocumentReference, dev.fenceguard.core.FenceToken, java.util.Map<java.lang.String, ?>);
                  public abstract dev.fenceguard.core.WriteOutcome fencedUpdate(ID, java.util.Map<java.lang.String, ?>, dev.fenceguard.core.FenceToken);
                  public abstract dev.fenceguard.core.WriteOutcome claim(dev.fenceguard.core.FenceToken) throws java.lang.Exception;
                  public abstract dev.fenceguard.redis.Builder withWriteTimeout(java.time.Duration);
                  public abstract dev.fenceguard.redis.Builder withCallTimeout(java.time.Duration);
                }
                """, new ArrayList<>(), fake);
        assertThat(fenceOutOfPlace(fake)).extracting(Method::name).containsExactly("set", "fencedUpdate");
        assertThat(otherTimeoutSettings(fake)).extracting(Method::name).containsExactly("withWriteTimeout");
        assertThat(sinceInTypeJavadoc(List.of("import a.B;", "/**", " * X.", " *", " * @since 0.1", " */", "@Deprecated",
                "public final class X {"), "X")).isTrue();
        assertThat(sinceInTypeJavadoc(List.of("import a.B;", "/** X. */", "public record X(int a) {"), "X")).isFalse();
        assertThat(sinceInTypeJavadoc(List.of("import a.B;", "public interface X {"), "X")).isFalse();
        assertThat(sinceInTypeJavadoc(List.of("/**", " * @since 0.1", " */", "@Target({ElementType.FIELD})", "public @interface X {"), "X"))
                .isTrue();
    }

    private static final Pattern METHOD = Pattern.compile("^\\s+(?:[\\w.$<>?,\\[\\] &]+ )?([\\w$]+)\\((.*)\\)(?: throws .*)?;$");

    /** Reads types and methods from a dump: type headers start at column 0, members are indented. */
    static void parse(String dump, List<String> types, List<Method> methods) {
        String type = null;
        for (String line : dump.lines().toList()) {
            if (line.isBlank() || line.startsWith("#") || line.equals("}")) {
                continue;
            }
            if (!line.startsWith(" ")) {
                type = typeOf(line);
                types.add(type);
                continue;
            }
            Matcher m = METHOD.matcher(line);
            if (type != null && m.matches()) {
                methods.add(new Method(type, m.group(1), split(m.group(2)), line));
            }
        }
    }

    private static String typeOf(String header) {
        for (String word : header.split(" ")) {
            if (word.contains(".")) {
                int generic = word.indexOf('<');
                return generic < 0 ? word : word.substring(0, generic);
            }
        }
        return header;
    }

    /** The parameter types of a javap parameter list, split at the commas outside {@code <>}. */
    static List<String> split(String parameters) {
        List<String> out = new ArrayList<>();
        if (parameters.isBlank()) {
            return out;
        }
        int depth = 0;
        StringBuilder current = new StringBuilder();
        for (char c : parameters.toCharArray()) {
            if (c == '<') {
                depth++;
            } else if (c == '>') {
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(current.toString().strip());
                current.setLength(0);
                continue;
            }
            current.append(c);
        }
        out.add(current.toString().strip());
        return out;
    }
}
