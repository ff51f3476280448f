package dev.fenceguard.redis.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A Lua script with its SHA-1, loaded from this package's resources or built from text. */
public record Script(String name, String source, String sha) {

    /** Loads {@code <name>.lua} from the class path. */
    public static Script load(String name) {
        return load(name, java.util.Map.of());
    }

    /** Loads {@code <name>.lua}, replacing each {@code ${NAME}} by its value. */
    public static Script load(String name, java.util.Map<String, String> values) {
        try (InputStream in = Script.class.getResourceAsStream(name + ".lua")) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + name + ".lua");
            }
            String source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (var e : values.entrySet()) {
                source = source.replace("${" + e.getKey() + "}", e.getValue());
            }
            if (source.contains("${")) {
                throw new IllegalStateException("unfilled placeholder in " + name + ".lua");
            }
            return of(name, source);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A script from source text. */
    public static Script of(String name, String source) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
            return new Script(name, source, HexFormat.of().formatHex(digest));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every Java platform", e);
        }
    }
}
