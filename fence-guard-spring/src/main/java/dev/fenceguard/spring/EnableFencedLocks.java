package dev.fenceguard.spring;

import dev.fenceguard.spring.internal.FencedLockRegistrar;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;

/**
 * Turns on {@link FencedLock} in a Spring application without Spring Boot (with Boot, the
 * auto-configuration does it, and gives way to this annotation when present). Put it on a
 * {@code @Configuration} class of a context that has one {@link dev.fenceguard.core.LockClient} bean:
 *
 * <pre>{@code
 * @Configuration
 * @EnableFencedLocks
 * @EnableTransactionManagement
 * class LockingConfig {
 *     @Bean
 *     LockClient lockClient(DataSource dataSource) {
 *         return LockClient.of(FenceGuardJdbc.builder(dataSource).build().lockBackend());
 *     }
 * }
 * }</pre>
 *
 * <p>It registers the advisor that runs annotated methods under the lock, and Spring's infrastructure
 * auto-proxy creator if the context has none (the one {@code @EnableTransactionManagement} registers).
 * The advice runs before the transaction advice when {@link #order()} is below it (by default it is);
 * the context fails to start otherwise. Invalid attributes fail startup, naming the attribute.
 *
 * @since 0.1
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(FencedLockRegistrar.class)
public @interface EnableFencedLocks {

    /** TTL of a {@link FencedLock} that sets none ({@code "30s"}, {@code "500ms"}, {@code "PT30S"}); 1 ms .. 30 days. */
    String defaultTtl() default "30s";

    /** How long a {@link FencedLock} that sets no wait waits for the lock; 0 .. 365 days. */
    String defaultWait() default "5s";

    /**
     * Order of the advice: below the transaction advice's (Spring's default is
     * {@link Ordered#LOWEST_PRECEDENCE}), so that the lock is taken before the transaction begins.
     */
    int order() default Ordered.LOWEST_PRECEDENCE - 1000;
}
