package dev.fenceguard.spring.internal;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.spring.FencedLock;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.aop.Advice;
import org.springframework.aop.Advisor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * The advisor that applies {@link FencedLock}: matches annotated methods (checking each annotation
 * when its bean is proxied) and runs them under the lock. After startup it checks that it runs before
 * every transaction advisor, so that the lock is always taken outside the transaction.
 */
public final class FencedLockAdvisor extends AbstractPointcutAdvisor implements BeanFactoryAware, SmartInitializingSingleton {
    private static final long serialVersionUID = 1L;

    private static final String TRANSACTION_INTERCEPTOR = "org.springframework.transaction.interceptor.TransactionInterceptor";

    /** The bean name under which {@code @EnableFencedLocks} and the Spring Boot auto-configuration register it. */
    public static final String BEAN_NAME = "fenceGuardFencedLockAdvisor";

    private final transient Map<Method, LockSpec> specs = new ConcurrentHashMap<>();
    private final Duration defaultTtl;
    private final Duration defaultWait;
    private transient BeanFactory beanFactory;
    private transient FencedLockInterceptor interceptor;
    private transient volatile LockClient lockClient;

    /**
     * The lock client is the application's {@link LockClient} bean, looked up on the first call (so that
     * this advisor, created early, does not create the client and its backend before the beans they need).
     *
     * @param defaultTtl TTL of an annotation that sets none
     * @param defaultWait wait of an annotation that sets none
     * @param order the advice order; must be lower than the transaction advice's
     * @throws IllegalArgumentException if a default is out of range, naming it
     */
    public FencedLockAdvisor(Duration defaultTtl, Duration defaultWait, int order) {
        Checks.ttl(defaultTtl, "@FencedLock default");
        Checks.maxWait(defaultWait, "@FencedLock default");
        this.defaultTtl = defaultTtl;
        this.defaultWait = defaultWait;
        setOrder(order);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beanFactory = beanFactory;
        this.interceptor = new FencedLockInterceptor(specs, this::client, beanFactory);
    }

    /** The application's lock client, looked up on the first call and then kept (a lookup by type on every call costs). */
    private LockClient client() {
        LockClient c = lockClient;
        if (c == null) {
            c = beanFactory.getBean(LockClient.class);
            lockClient = c; // a race looks it up twice and finds the same singleton
        }
        return c;
    }

    @Override
    public Pointcut getPointcut() {
        return new StaticMethodMatcherPointcut() {
            @Override
            public boolean matches(Method method, Class<?> targetClass) {
                Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
                FencedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, FencedLock.class);
                if (annotation == null) {
                    return false;
                }
                specs.computeIfAbsent(specific, m -> LockSpec.of(m, annotation, defaultTtl, defaultWait));
                return true;
            }
        };
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }

    /**
     * @throws IllegalStateException if a transaction advisor runs before this one (its order is not
     *     greater than this advisor's)
     */
    @Override
    public void afterSingletonsInstantiated() {
        if (!(beanFactory instanceof ListableBeanFactory beans)) {
            return;
        }
        for (Map.Entry<String, Advisor> e : beans.getBeansOfType(Advisor.class, false, false).entrySet()) {
            Advisor other = e.getValue();
            if (other != this && other instanceof Ordered ordered && isTransactional(other.getAdvice())
                    && ordered.getOrder() <= getOrder()) {
                throw new IllegalStateException("the @FencedLock advice (order " + getOrder() + ") must run before the transaction"
                        + " advice '" + e.getKey() + "' (order " + ordered.getOrder() + "), so that the lock is taken before the"
                        + " transaction begins: set its order (fence-guard.annotation.order with Spring Boot, @EnableFencedLocks(order = ..)"
                        + " without) below " + ordered.getOrder() + ", or give @EnableTransactionManagement a higher order");
            }
        }
    }

    private static boolean isTransactional(Advice advice) {
        for (Class<?> c = advice == null ? null : advice.getClass(); c != null; c = c.getSuperclass()) {
            if (c.getName().equals(TRANSACTION_INTERCEPTOR)) {
                return true;
            }
        }
        return false;
    }
}
