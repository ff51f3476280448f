package dev.fenceguard.migrations;

import dev.fenceguard.core.FenceEncoding;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Command line: writes a versioned Flyway SQL migration that adds a fence column to a table, into your
 * migration folder, with the next free version number.
 *
 * <!-- not compiled: a shell command -->
 * <pre>
 * java -cp fence-guard-migrations.jar:fence-guard-core.jar dev.fenceguard.migrations.FenceColumnGenerator \
 *      --dir src/main/resources/db/migration --table public.orders [--column fence_token] \
 *      [--encoding integer|text] [--tombstone-column fence_deleted] [--lock-timeout-ms 5000] [--version 12] \
 *      [--database postgresql|mysql]
 * </pre>
 *
 * <p>The next version is one more than the first number of the highest {@code V<version>__*.sql} in
 * the folder (Java migrations elsewhere are not seen: pass {@code --version} then). Every argument is
 * checked before anything is written; an existing file is never overwritten.
 *
 * @since 0.1
 */
public final class FenceColumnGenerator {

    private static final Pattern VERSIONED = Pattern.compile("V(\\d+(?:[._]\\d+)*)__.*\\.sql");

    private FenceColumnGenerator() {}

    public static void main(String[] args) {
        int status = run(args, System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /**
     * Runs the generator.
     *
     * @return 0 on success, 2 on bad arguments (nothing written), 1 on an I/O failure
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            err.println(usage());
            return 2;
        }
        try {
            Path file = write(options);
            out.println("wrote " + file);
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("error: " + e);
            return 1;
        }
    }

    static Path write(Options o) throws IOException {
        if (!Files.isDirectory(o.dir)) {
            throw new IllegalArgumentException("--dir " + o.dir + " is not a directory");
        }
        String version = o.version != null ? o.version : nextVersion(o.dir);
        String name = "V" + version + "__fence_guard_" + o.column.table().toLowerCase(Locale.ROOT) + "_"
                + o.column.column().toLowerCase(Locale.ROOT) + ".sql";
        Path file = o.dir.resolve(name);
        Files.writeString(file, o.mysql ? o.column.mysqlScript() : o.column.script(), StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
        return file;
    }

    /** One more than the leading number of the highest versioned SQL migration in {@code dir}; 1 if none. */
    static String nextVersion(Path dir) throws IOException {
        BigInteger highest = BigInteger.ZERO;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Matcher m = VERSIONED.matcher(f.getFileName().toString());
                if (m.matches()) {
                    BigInteger major = new BigInteger(m.group(1).split("[._]")[0]);
                    highest = highest.max(major);
                }
            }
        }
        return highest.add(BigInteger.ONE).toString();
    }

    static String usage() {
        return "usage: FenceColumnGenerator --dir DIR --table [SCHEMA.]TABLE [--column NAME] [--encoding integer|text]\n"
                + "       [--tombstone-column NAME] [--lock-timeout-ms MS] [--version V] [--database postgresql|mysql]";
    }

    record Options(Path dir, FenceColumn column, String version, boolean mysql) {

        static Options parse(String[] args) {
            List<String> rest = new ArrayList<>(Arrays.asList(args));
            Path dir = null;
            String table = null;
            String column = FenceColumn.DEFAULT_COLUMN;
            FenceEncoding encoding = FenceEncoding.INTEGER;
            String tombstone = null;
            long timeoutMs = 5000;
            String version = null;
            boolean mysql = false;
            while (!rest.isEmpty()) {
                String flag = rest.removeFirst();
                if (rest.isEmpty()) {
                    throw new IllegalArgumentException(flag.startsWith("--") ? flag + " needs a value" : "unexpected argument '" + flag + "'");
                }
                String value = rest.removeFirst();
                switch (flag) {
                    case "--dir" -> dir = Path.of(value);
                    case "--table" -> table = value;
                    case "--column" -> column = value;
                    case "--encoding" -> encoding = switch (value.toLowerCase(Locale.ROOT)) {
                        case "integer", "bigint" -> FenceEncoding.INTEGER;
                        case "text", "char15" -> FenceEncoding.TEXT;
                        default -> throw new IllegalArgumentException("--encoding must be integer or text, was '" + value + "'");
                    };
                    case "--tombstone-column" -> tombstone = value;
                    case "--lock-timeout-ms" -> {
                        try {
                            timeoutMs = Long.parseLong(value);
                        } catch (NumberFormatException e) {
                            throw new IllegalArgumentException("--lock-timeout-ms must be a number, was '" + value + "'");
                        }
                    }
                    case "--version" -> {
                        if (!value.matches("\\d+([._]\\d+)*")) {
                            throw new IllegalArgumentException("--version must be digits separated by '.' or '_', was '" + value + "'");
                        }
                        version = value;
                    }
                    case "--database" -> mysql = switch (value.toLowerCase(Locale.ROOT)) {
                        case "postgresql", "postgres" -> false;
                        case "mysql", "mariadb" -> true;
                        default -> throw new IllegalArgumentException("--database must be postgresql or mysql (MySQL and MariaDB), was '"
                                + value + "'");
                    };
                    default -> throw new IllegalArgumentException("unknown option '" + flag + "'");
                }
            }
            if (dir == null) {
                throw new IllegalArgumentException("--dir is required");
            }
            if (table == null) {
                throw new IllegalArgumentException("--table is required");
            }
            int dot = table.indexOf('.');
            if (dot < 0 && mysql) {
                throw new IllegalArgumentException("--table needs the database for MySQL/MariaDB: --table DATABASE.TABLE");
            }
            String schema = dot < 0 ? "public" : table.substring(0, dot);
            String name = dot < 0 ? table : table.substring(dot + 1);
            FenceColumn spec = FenceColumn.on(schema, name).withColumn(column).withEncoding(encoding)
                    .withLockTimeout(Duration.ofMillis(timeoutMs));
            if (tombstone != null) {
                spec = spec.withTombstoneColumn(tombstone);
            }
            return new Options(dir, spec, version, mysql);
        }
    }
}
