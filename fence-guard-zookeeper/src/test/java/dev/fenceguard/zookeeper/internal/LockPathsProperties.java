package dev.fenceguard.zookeeper.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockKey;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.zookeeper.common.PathUtils;

/**
 * Every lock key gives one valid ZooKeeper path segment, distinct keys give distinct segments, and no key
 * names the warm-up node: checked with ZooKeeper's own path validation, over keys built from the characters
 * that could break an encoding (the escape character, separators, dots, controls, non-ASCII, surrogate pairs).
 */
class LockPathsProperties {

    private static final LockPaths PATHS = LockPaths.under("/fence-guard/locks", null);

    @Provide
    Arbitrary<String> keys() {
        return Arbitraries.strings().withChars('%', '/', '.', ':', 'k', 'K', '2', 'F', '-', '_', ' ', '\u0001', '\u007f', 'é', '€',
                '\uffff', '\u2028').withCharRange('a', 'c').ofMinLength(1).ofMaxLength(12)
                .injectDuplicates(0.1).filter(s -> { try { LockKey.of(s); return true; } catch (IllegalArgumentException e) { return false; } });
    }

    @Property(tries = 2_000)
    void everyKeyIsOneValidSegmentOutsideTheInternalNames(@ForAll("keys") String key) {
        String path = PATHS.keyNode(LockKey.of(key));
        PathUtils.validatePath(path);
        PathUtils.validatePath(PATHS.leaseNode(LockKey.of(key)));
        String name = LockPaths.name(LockKey.of(key));
        assertThat(name).doesNotContain("/").startsWith("k").isNotEqualTo(LockPaths.WARM_UP);
    }

    @Property(tries = 500)
    void distinctKeysNeverShareANode(@ForAll("keys") String a, @ForAll("keys") String b) {
        if (!LockKey.of(a).equals(LockKey.of(b))) {
            assertThat(LockPaths.name(LockKey.of(a))).isNotEqualTo(LockPaths.name(LockKey.of(b)));
        }
    }

    @Example
    void lookAlikeKeysAndTheLongestKeyAreDistinctValidNames() {
        List<String> keys = List.of("a/b", "a%2Fb", "a%252Fb", ".", "..", "warm-up", "k", "kk", "é", "e\u0301", "€".repeat(170) + "xx");
        Set<String> names = new HashSet<>();
        for (String key : keys) {
            String name = LockPaths.name(LockKey.of(key));
            PathUtils.validatePath(PATHS.keyNode(LockKey.of(key)));
            names.add(name);
        }
        // "é" and "e\u0301" are one key after NFC normalisation
        assertThat(names).hasSize(keys.size() - 1);
    }
}
