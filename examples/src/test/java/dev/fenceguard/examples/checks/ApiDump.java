package dev.fenceguard.examples.checks;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The public surface of each published module, as text, read from its compiled classes.
 *
 * <p>A module is a folder of the repository with {@code src/main/java/module-info.java}; its classes are
 * found on this test's class path ({@code <folder>/target/classes} or {@code <folder>/target/*.jar}). The
 * dump lists, for every type of a package the module exports to everyone, the public and protected
 * declarations, as {@code javap -protected} prints them (generic signatures included). javap reads the
 * class files without loading them, so a module's optional dependencies need not be on the class path,
 * and it runs on any JDK the build runs on.
 */
final class ApiDump {

    private ApiDump() {}

    /** A published module: its folder name, and where its compiled classes are. */
    record Module(String folder, Path classes) {
        Path dumpFile() {
            return Samples.ROOT.resolve(folder).resolve("api").resolve(folder + ".api");
        }
    }

    /** The folders of the published modules, found from their sources. */
    static Set<String> publishedFolders() {
        return Samples.publishedMainSourceRoots().stream().map(p -> Samples.ROOT.relativize(p).getName(0).toString())
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The published modules whose classes are on this test's class path, by folder. */
    static Map<String, Module> modulesOnClassPath() {
        Set<String> published = publishedFolders();
        Map<String, Module> modules = new LinkedHashMap<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(entry).toAbsolutePath().normalize();
            // <folder>/target/classes or <folder>/target/<artifact>.jar, inside this repository
            Path target = p.getParent();
            if (target == null || !target.getFileName().toString().equals("target") || target.getParent() == null
                    || !target.getParent().getParent().equals(Samples.ROOT)) {
                continue;
            }
            String folder = target.getParent().getFileName().toString();
            if (published.contains(folder) && (p.getFileName().toString().equals("classes") || p.toString().endsWith(".jar"))) {
                modules.put(folder, new Module(folder, p));
            }
        }
        return modules;
    }

    private static final Map<Module, String> DUMPS = new java.util.concurrent.ConcurrentHashMap<>();

    /** The dump of one module: one javap block per public type, sorted by type name (made once per JVM). */
    static String dump(Module module) {
        return DUMPS.computeIfAbsent(module, ApiDump::read);
    }

    private static String read(Module module) {
        if (Files.isDirectory(module.classes())) {
            return dump(module.classes());
        }
        try (FileSystem jar = FileSystems.newFileSystem(module.classes())) {
            return dump(jar.getPath("/"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String dump(Path classes) {
        ModuleDescriptor descriptor;
        try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
            descriptor = ModuleDescriptor.read(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Set<String> exported = descriptor.exports().stream().filter(e -> !e.isQualified()).map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toSet());
        List<Path> files = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(classes)) {
            walk.filter(p -> p.getFileName() != null && p.getFileName().toString().endsWith(".class"))
                    .filter(p -> !p.getFileName().toString().equals("module-info.class"))
                    .filter(p -> exported.contains(packageOf(classes, p)))
                    .sorted().forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        StringBuilder out = new StringBuilder("# module ").append(descriptor.name()).append(": exported packages ")
                .append(new TreeSet<>(exported)).append('\n');
        // one javap run per module: starting it per class would cost seconds
        Map<String, String> blocks = new java.util.TreeMap<>();
        for (String block : javap(files)) {
            String header = block.lines().filter(l -> !l.startsWith("Compiled from")).findFirst().orElse("");
            String type = typeName(header);
            if (type != null && (header.startsWith("public ") || header.startsWith("protected "))) {
                blocks.put(type, block.lines().filter(l -> !l.startsWith("Compiled from")).collect(Collectors.joining("\n", "", "\n")));
            }
        }
        // a nested type counts only if every type around it is public too
        blocks.forEach((type, block) -> {
            String outer = type;
            while (outer.contains("$")) {
                outer = outer.substring(0, outer.lastIndexOf('$'));
                if (!blocks.containsKey(outer)) {
                    return;
                }
            }
            out.append('\n').append(block);
        });
        return out.toString();
    }

    private static String packageOf(Path classes, Path classFile) {
        Path rel = classes.relativize(classFile).getParent();
        return rel == null ? "" : rel.toString().replace('/', '.').replace('\\', '.');
    }

    /** The binary name in a javap class header such as {@code public final class a.b.C<T> implements D {}. */
    private static String typeName(String header) {
        for (String word : header.split(" ")) {
            if (word.contains(".") && !word.contains("(")) {
                int generic = word.indexOf('<');
                return generic < 0 ? word : word.substring(0, generic);
            }
        }
        return null;
    }

    private static List<String> javap(List<Path> files) {
        if (files.isEmpty()) {
            return List.of();
        }
        ToolProvider javap = ToolProvider.findFirst("javap").orElseThrow(() -> new IllegalStateException("no javap in this JDK"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> args = new ArrayList<>(List.of("-protected"));
        // javap takes files of the default file system only; a jar's entries are copied out first
        List<Path> local = files.get(0).getFileSystem().equals(FileSystems.getDefault()) ? files : copyOut(files);
        local.forEach(f -> args.add(f.toString()));
        int status = javap.run(new PrintWriter(out), new PrintWriter(err), args.toArray(String[]::new));
        if (status != 0) {
            throw new IllegalStateException("javap failed (" + status + "): " + err);
        }
        List<String> blocks = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : out.toString().lines().toList()) {
            if (line.startsWith("Compiled from") && !current.isEmpty()) {
                blocks.add(current.toString());
                current.setLength(0);
            }
            current.append(line).append('\n');
        }
        if (!current.isEmpty()) {
            blocks.add(current.toString());
        }
        return blocks;
    }

    private static List<Path> copyOut(List<Path> files) {
        try {
            Path dir = Files.createTempDirectory("api-dump");
            List<Path> copies = new ArrayList<>();
            for (Path f : files) {
                Path copy = dir.resolve(f.toString().substring(1));
                Files.createDirectories(copy.getParent());
                Files.copy(f, copy);
                copies.add(copy);
            }
            return copies;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
