package dev.fenceguard.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.testkit.servers.TestMariaDb;
import dev.fenceguard.testkit.servers.TestPostgres;
import dev.fenceguard.testkit.servers.TestRedis;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * fence-guard on the module path (issue #20 item 3): compiles modular applications ({@code src/modular}:
 * locks and fenced writes on PostgreSQL and Redis; {@code src/modular-jdbc}: SQL locks with no jOOQ on the
 * module path) against the fence-guard modules and their dependencies as modules, then runs each with
 * {@code java --module-path .. --module ..} in a JVM of its own, without any {@code --add-opens},
 * {@code --add-reads} or {@code --add-exports}.
 */
class ModulePathTest {

    /**
     * The jars and class folders of the application's module graph, found on this test's class path:
     * fence-guard's core, jdbc, jooq and redis modules, and the libraries they require.
     */
    private static final Pattern MODULE_PATH = Pattern.compile(
            ".*/(fence-guard-(core|jdbc|jooq|redis)(/target/classes|-[^/]*\\.jar)"
                    + "|(jooq|r2dbc-spi|reactive-streams|postgresql|slf4j-api|slf4j-simple|lettuce-core|reactor-core|netty-[a-z0-9-]+?)-\\d[^/]*\\.jar)");

    /** An application that takes SQL locks only: fence-guard-jdbc and one driver, no jOOQ. */
    private static Pattern jdbcOnly(String driver) {
        return Pattern.compile(".*/(fence-guard-(core|jdbc)(/target/classes|-[^/]*\\.jar)|(" + driver + "|slf4j-api|slf4j-simple)-\\d[^/]*\\.jar)");
    }

    @Test
    void aModularApplicationRunsOnTheModulePathWithoutOpeningAnything() throws Exception {
        String out = compileAndRun(MODULE_PATH, "dev.fenceguard.examples.modular", Path.of("src", "modular"),
                "dev.fenceguard.examples.modular.ModularQuickStart", TestPostgres.server().jdbcUrl(), TestRedis.server().uri().toString());
        assertThat(out).contains("postgres: Applied").contains("redis: Applied")
                .contains("OK on the module path: dev.fenceguard.examples.modular");
    }

    @Test
    void theSqlLocksRunOnTheModulePathWithNeitherJooqNorAnotherDatabasesDriver() throws Exception {
        String onPostgres = compileAndRun(jdbcOnly("postgresql"), "dev.fenceguard.examples.jdbconly", Path.of("src", "modular-jdbc"),
                "dev.fenceguard.examples.jdbconly.JdbcOnlyLocks", TestPostgres.server().jdbcUrl());
        assertThat(onPostgres).contains("postgres: fences 1 then 2, held in between: true").contains("module org.jooq: absent")
                .contains("module org.mariadb.jdbc: absent").contains("OK on the module path: dev.fenceguard.examples.jdbconly");
        String onMariaDb = compileAndRun(jdbcOnly("mariadb-java-client"), "dev.fenceguard.examples.jdbconly", Path.of("src", "modular-jdbc"),
                "dev.fenceguard.examples.jdbconly.JdbcOnlyLocks", TestMariaDb.server().jdbcUrl());
        assertThat(onMariaDb).contains("mariadb: fences 1 then 2, held in between: true").contains("module org.jooq: absent")
                .contains("module org.postgresql.jdbc: absent").contains("OK on the module path: dev.fenceguard.examples.jdbconly");
    }

    /**
     * Compiles the module {@code module} under {@code sources} against the entries of this test's class path
     * that {@code modulePathEntries} matches, runs {@code mainClass} in a JVM of its own on that module path
     * with {@code args}, and returns its output once it ended with status 0.
     */
    private static String compileAndRun(Pattern modulePathEntries, String module, Path sources, String mainClass, String... args)
            throws Exception {
        List<String> modulePath = new ArrayList<>();
        for (String entry : testClassPath()) {
            if (modulePathEntries.matcher(entry.replace(File.separatorChar, '/')).matches()) {
                modulePath.add(entry);
            }
        }
        assertThat(modulePath).as("module path found on the class path").anyMatch(p -> p.contains("fence-guard-jdbc"))
                .anyMatch(p -> p.contains("fence-guard-core"));
        Path source = sources.resolve(module);
        Path classes = Path.of("target", "modular-classes", module);
        List<String> files;
        try (Stream<Path> walk = Files.walk(source)) {
            files = walk.filter(p -> p.toString().endsWith(".java")).map(Path::toString).toList();
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> compile = new ArrayList<>(List.of("-d", classes.toString(), "--module-path", String.join(File.pathSeparator, modulePath),
                "-Xlint:-requires-automatic"));
        compile.addAll(files);
        assertThat(javac.run(null, System.out, System.err, compile.toArray(String[]::new))).as("javac on the module path").isZero();

        modulePath.add(classes.toString());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "--module-path", String.join(File.pathSeparator, modulePath), "--module",
                module + "/" + mainClass));
        command.addAll(List.of(args));
        Path log = Files.createTempFile("fence-guard-modular", ".log");
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean ended = p.waitFor(2, TimeUnit.MINUTES);
            String out = Files.readString(log, StandardCharsets.UTF_8);
            if (!ended) {
                p.destroyForcibly();
            }
            assertThat(ended).as("the modular application ended; output:%n%s", out).isTrue();
            assertThat(p.exitValue()).as("exit status; output:%n%s", out).isZero();
            assertThat(out.toLowerCase(Locale.ROOT)).as("no illegal access warnings").doesNotContain("illegal reflective access")
                    .doesNotContain("--add-opens");
            return out;
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** This JVM's class path: surefire may start tests through a manifest-only jar and pass the real one as a property. */
    private static List<String> testClassPath() throws IOException {
        String path = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return List.of(path.split(Pattern.quote(File.pathSeparator)));
    }
}
