package dev.fenceguard.spring.internal;

import dev.fenceguard.spring.EnableFencedLocks;
import java.time.Duration;
import java.util.Map;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers the {@link FencedLockAdvisor} that {@link EnableFencedLocks} asks for, with the attributes
 * checked here, and the infrastructure auto-proxy creator if the context has none yet. Public for
 * Spring, which instantiates it; not an API.
 */
public final class FencedLockRegistrar implements ImportBeanDefinitionRegistrar {

    /** For Spring. */
    public FencedLockRegistrar() {}

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Map<String, Object> a = metadata.getAnnotationAttributes(EnableFencedLocks.class.getName());
        if (a == null) {
            return;
        }
        String where = "@EnableFencedLocks on " + metadata.getClassName();
        Duration ttl = duration(where, "defaultTtl", (String) a.get("defaultTtl"));
        Duration wait = duration(where, "defaultWait", (String) a.get("defaultWait"));
        int order = (Integer) a.get("order");
        FencedLockAdvisor advisor;
        try {
            advisor = new FencedLockAdvisor(ttl, wait, order);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where + ": " + e.getMessage(), e);
        }
        RootBeanDefinition definition = new RootBeanDefinition(FencedLockAdvisor.class, () -> advisor);
        definition.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
        registry.registerBeanDefinition(FencedLockAdvisor.BEAN_NAME, definition);
        registerProxyCreator(registry);
    }

    /** The auto-proxy creator for infrastructure advisors, unless a stronger one is registered already. */
    public static void registerProxyCreator(BeanDefinitionRegistry registry) {
        AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
    }

    private static Duration duration(String where, String attribute, String text) {
        try {
            return LockSpec.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where + ": " + attribute + " '" + text + "' is not a duration (e.g. \"30s\", \"500ms\","
                    + " \"PT30S\")", e);
        }
    }
}
