package dev.fenceguard.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method under a lock, through {@code LockClient.withLock}: the lease is taken
 * before the method runs, renewed in the background while it runs, and released when it returns or
 * throws. The method gets the lease as an argument of type {@link dev.fenceguard.core.Lease} (the
 * caller passes {@code null} there; the argument is replaced), and code it calls on the same thread
 * gets it from {@link dev.fenceguard.core.LockContext}. Pass {@code lease.fence()} to every write the
 * lock protects: only the resource can refuse a zombie.
 *
 * <pre>{@code
 * @FencedLock(key = "'orders:' + #orderId", ttl = "30s", maxWait = "5s")
 * public Receipt pay(long orderId, Lease lease) {
 *     Receipt receipt = gateway.charge(orderId, lease.fence());
 *     writes.on(orders).update(orderId, lease.fence(), Assignments.of("status", "paid")).orThrow();
 *     return receipt;
 * }
 * }</pre>
 *
 * <p>It is applied by {@link EnableFencedLocks}, or by the Spring Boot auto-configuration, in a context
 * with one {@link dev.fenceguard.core.LockClient} bean.
 *
 * <p><b>Transactions.</b> The lock is taken <em>outside</em> any transaction: a transaction that began
 * before the lock was held could have read what the previous holder was still changing. The advice
 * runs before Spring's transaction advice (its order, {@link EnableFencedLocks#order()} or
 * {@code fence-guard.annotation.order}, is below the transaction advice's; startup fails otherwise), so
 * {@code @FencedLock} and {@code @Transactional} on the same method take the lock, then begin the
 * transaction, then commit, then release. A call made while a
 * transaction is already active fails with {@link IllegalStateException} before the lock is asked for.
 *
 * <p>If the lock is not had within {@link #maxWait()}, the method does not run and the call throws
 * {@link LockNotAcquiredException}. Like every Spring proxy-based annotation, it applies to calls from
 * other beans, not to a bean's calls to its own methods. Invalid attributes (an unparsable key or
 * duration, a TTL outside 1 ms .. 30 days, two {@code Lease} parameters) fail startup, naming the method.
 *
 * @since 0.1
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FencedLock {

    /**
     * The lock key, a SpEL expression over the method's arguments ({@code #orderId}, or {@code #p0} /
     * {@code #a0} by position; names need the {@code -parameters} compiler flag, which Spring Boot's build
     * plugins set), evaluated on each call; a constant key is a quoted string ({@code "'nightly-report'"}).
     * Its value must be a valid lock key (1..512 UTF-8 bytes, no NUL); an invalid one fails the call before
     * any I/O.
     */
    String key();

    /**
     * Lease TTL, e.g. {@code "30s"}, {@code "PT30S"} or {@code "30000ms"}; when empty, the default of
     * {@link EnableFencedLocks#defaultTtl()} (with Spring Boot: {@code fence-guard.default-ttl}).
     */
    String ttl() default "";

    /**
     * How long to wait for the lock, e.g. {@code "5s"} or {@code "0s"} to try once; when empty, the default
     * of {@link EnableFencedLocks#defaultWait()} (with Spring Boot: {@code fence-guard.default-wait}).
     */
    String maxWait() default "";
}
