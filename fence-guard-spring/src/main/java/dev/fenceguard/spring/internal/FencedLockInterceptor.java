package dev.fenceguard.spring.internal;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.spring.LockNotAcquiredException;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.util.ClassUtils;

/** Runs a {@code @FencedLock} method inside {@link LockClient#withLock}. */
final class FencedLockInterceptor implements MethodInterceptor {

    private static final boolean TRANSACTIONS = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager", FencedLockInterceptor.class.getClassLoader());

    private final Map<Method, LockSpec> specs;
    private final Supplier<LockClient> client;
    private final BeanFactory beanFactory;
    private final ParameterNameDiscoverer names = new DefaultParameterNameDiscoverer();

    FencedLockInterceptor(Map<Method, LockSpec> specs, Supplier<LockClient> client, BeanFactory beanFactory) {
        this.specs = specs;
        this.client = client;
        this.beanFactory = beanFactory;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Method method = target == null ? invocation.getMethod()
                : AopUtils.getMostSpecificMethod(invocation.getMethod(), target.getClass());
        LockSpec spec = specs.get(method);
        if (spec == null) {
            spec = specs.get(invocation.getMethod());
        }
        if (spec == null) {
            return invocation.proceed(); // matched through another proxy path; nothing to lock
        }
        if (TRANSACTIONS && Transactions.active()) {
            throw new IllegalStateException("@FencedLock " + spec.description() + " was called inside an active transaction: the"
                    + " lock must be taken before the transaction begins (a transaction begun earlier may have read what the"
                    + " previous holder was still changing). Call it from outside the transaction; @Transactional on the same"
                    + " method is fine, the lock is taken first");
        }
        Object[] args = invocation.getArguments();
        String key = key(spec, method, target, args);
        LockSpec s = spec;
        Optional<Result> result = client.get().withLock(key, spec.ttl(), spec.maxWait(), lease -> run(invocation, s, args, lease));
        return result.orElseThrow(() -> new LockNotAcquiredException(key, s.description(), s.maxWait())).value();
    }

    private String key(LockSpec spec, Method method, Object target, Object[] args) {
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(target, method, args, names);
        context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        Object value = spec.key().getValue(context);
        if (value == null) {
            throw new IllegalArgumentException("@FencedLock " + spec.description() + ": key " + spec.keySource()
                    + " evaluated to null");
        }
        return value.toString();
    }

    private static Result run(MethodInvocation invocation, LockSpec spec, Object[] args, Lease lease) throws Exception {
        if (spec.leaseParameter() >= 0 && invocation instanceof ProxyMethodInvocation proxied) {
            Object[] withLease = args.clone();
            withLease[spec.leaseParameter()] = lease;
            proxied.setArguments(withLease);
        }
        try {
            return new Result(invocation.proceed());
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t); // neither Exception nor Error: cannot happen in Java code
        }
    }

    /** A method's return value, null or void included (withLock's work must not return null). */
    private record Result(Object value) {}

    /** Kept apart so that spring-tx is loaded only when it is on the class path. */
    private static final class Transactions {
        static boolean active() {
            return org.springframework.transaction.support.TransactionSynchronizationManager.isActualTransactionActive();
        }
    }
}
