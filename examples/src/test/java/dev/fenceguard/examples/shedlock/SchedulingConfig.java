package dev.fenceguard.examples.shedlock;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.shedlock.FencedLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;

// docs/shedlock.md: the one bean (begin)
@Configuration
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
class SchedulingConfig {
    @Bean
    LockProvider lockProvider(LockClient locks) {
        return FencedLockProvider.builder(locks).build();      // was: new JdbcTemplateLockProvider(dataSource)
    }
}
// docs/shedlock.md: the one bean (end)
