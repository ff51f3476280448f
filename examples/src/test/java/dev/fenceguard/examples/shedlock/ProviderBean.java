package dev.fenceguard.examples.shedlock;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.shedlock.FencedLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The bean of FencedLockProvider's Javadoc, in an application of its own. */
@Configuration
@EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
class ProviderBean {
    // dev/fenceguard/shedlock/FencedLockProvider.java: the bean (begin)
    @Bean
    LockProvider lockProvider(LockClient locks) {
        return FencedLockProvider.builder(locks).build();
    }
    // dev/fenceguard/shedlock/FencedLockProvider.java: the bean (end)
}
