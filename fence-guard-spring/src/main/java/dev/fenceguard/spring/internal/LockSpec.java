package dev.fenceguard.spring.internal;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.spring.FencedLock;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.format.datetime.standard.DurationFormatterUtils;

/**
 * One {@link FencedLock} method, checked and parsed once when its bean is proxied (so a bad annotation
 * fails startup, not the first call).
 *
 * @param leaseParameter index of the {@code Lease} parameter, or -1
 */
record LockSpec(Method method, String description, Expression key, String keySource, Duration ttl, Duration maxWait,
        int leaseParameter) {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    static LockSpec of(Method method, FencedLock annotation, Duration defaultTtl, Duration defaultWait) {
        String description = describe(method);
        Expression key;
        try {
            key = PARSER.parseExpression(annotation.key());
        } catch (ParseException e) {
            throw invalid(description, "key '" + annotation.key() + "' is not a SpEL expression: " + e.getMessage());
        }
        if (annotation.key().isBlank()) {
            throw invalid(description, "key must not be empty");
        }
        Duration ttl = duration(description, "ttl", annotation.ttl(), defaultTtl);
        Duration maxWait = duration(description, "maxWait", annotation.maxWait(), defaultWait);
        try {
            Checks.ttl(ttl, "@FencedLock");
            Checks.maxWait(maxWait, "@FencedLock");
        } catch (IllegalArgumentException e) {
            throw invalid(description, e.getMessage());
        }
        int lease = -1;
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            if (Lease.class.equals(types[i])) {
                if (lease >= 0) {
                    throw invalid(description, "has more than one Lease parameter (" + (lease + 1) + " and " + (i + 1) + ")");
                }
                lease = i;
            }
        }
        return new LockSpec(method, description, key, annotation.key(), ttl, maxWait, lease);
    }

    private static Duration duration(String description, String attribute, String text, Duration fallback) {
        if (text.isEmpty()) {
            return fallback;
        }
        try {
            return parse(text);
        } catch (IllegalArgumentException e) {
            throw invalid(description, attribute + " '" + text + "' is not a duration (e.g. \"30s\", \"500ms\", \"PT30S\")");
        }
    }

    /**
     * A duration in Spring's forms ({@code 30s}, {@code 500ms}, {@code PT30S}), as Spring Boot reads
     * {@code fence-guard.default-ttl}: one reading for the annotation and {@code @EnableFencedLocks}.
     *
     * @throws IllegalArgumentException if it is none
     */
    static Duration parse(String text) {
        return DurationFormatterUtils.detectAndParse(text);
    }

    static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "("
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", ")) + ")";
    }

    private static IllegalStateException invalid(String description, String problem) {
        return new IllegalStateException("@FencedLock on " + description + ": " + problem);
    }
}
