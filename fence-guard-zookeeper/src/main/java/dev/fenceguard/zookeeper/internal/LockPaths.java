package dev.fenceguard.zookeeper.internal;

import dev.fenceguard.core.LockKey;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Where a lock lives under the root path: {@code <root>/<name>} (persistent, the key's node) and
 * {@code <root>/<name>/lease} (ephemeral, the holder's node). The name is {@code "k"} followed by the
 * key's UTF-8 bytes, each kept if it is an ASCII letter, digit, {@code -}, {@code _} or {@code .}, and
 * written {@code %XX} (upper-case hex) otherwise. So every {@link LockKey} gives one valid path segment
 * (no {@code /}, no control or surrogate characters, never {@code .} or {@code ..}), two keys never
 * share a name ({@code %} is always escaped, so the encoding is one-to-one), and no key names the
 * internal node {@link #WARM_UP} (it does not start with {@code k}). At most {@code 1 + 3 * 512}
 * characters, far below ZooKeeper's request limit.
 */
public final class LockPaths {

    /** The child of the root that warm-ups read; never written, and no lock key maps to it. */
    public static final String WARM_UP = "warm-up";
    /** The name of the holder's node under a key's node. */
    public static final String LEASE = "lease";

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private final String root;
    private final String base;

    private LockPaths(String root, String base) {
        this.root = root;
        this.base = base;
    }

    /**
     * Paths under {@code root}, checked by {@link #requireRoot}, in a Curator {@code namespace} (null or
     * empty for none): the backend talks to ZooKeeper's handle, which knows no namespace, so the paths
     * carry it.
     */
    public static LockPaths under(String root, String namespace) {
        requireRoot(root);
        return new LockPaths(root, namespace == null || namespace.isEmpty() ? root : "/" + namespace + root);
    }

    /** The root path as configured (below the namespace). */
    public String root() {
        return root;
    }

    /** The root path's full ZooKeeper path, the namespace included. */
    public String base() {
        return base;
    }

    /** The persistent node of {@code key}. */
    public String keyNode(LockKey key) {
        return base + "/" + name(key);
    }

    /** The ephemeral node of {@code key}'s holder. */
    public String leaseNode(LockKey key) {
        return keyNode(key) + "/" + LEASE;
    }

    /** The node warm-ups read. */
    public String warmUpNode() {
        return base + "/" + WARM_UP;
    }

    /** The segment of {@code key} under the root (see the class comment). */
    public static String name(LockKey key) {
        byte[] bytes = key.value().getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(1 + bytes.length).append('k');
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.') {
                out.append((char) c);
            } else {
                out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return out.toString();
    }

    /**
     * A root path of persistent nodes: absolute, without a trailing {@code /}, its segments non-empty, not
     * {@code .} or {@code ..}, of ASCII letters, digits and {@code - _ . :} only, and not {@code /} itself nor
     * ZooKeeper's own {@code /zookeeper} tree.
     *
     * @throws IllegalArgumentException naming the rule and the value
     * @throws NullPointerException if {@code root} is null
     */
    public static String requireRoot(String root) {
        Objects.requireNonNull(root, "rootPath");
        if (!root.startsWith("/") || root.length() < 2 || root.endsWith("/")) {
            throw new IllegalArgumentException("rootPath must be an absolute ZooKeeper path below / without a trailing /,"
                    + " e.g. /fence-guard/locks, was '" + root + "'");
        }
        for (String segment : root.substring(1).split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw new IllegalArgumentException("rootPath must not have an empty, '.' or '..' segment, was '" + root + "'");
            }
            if (!segment.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || c == '.' || c == ':')) {
                throw new IllegalArgumentException("rootPath segments may hold ASCII letters, digits and - _ . : only, was '"
                        + root + "'");
            }
        }
        if (root.equals("/zookeeper") || root.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException("rootPath must not be in ZooKeeper's own /zookeeper tree, was '" + root + "'");
        }
        return root;
    }

    @Override
    public String toString() {
        return base;
    }
}
