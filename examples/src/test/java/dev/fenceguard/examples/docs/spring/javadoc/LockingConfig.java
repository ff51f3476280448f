package dev.fenceguard.examples.docs.spring.javadoc;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.spring.EnableFencedLocks;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.annotation.EnableTransactionManagement;

// The sample in the Javadoc of EnableFencedLocks: found by the component scan of SpringSamplesTest, which
// runs the Javadoc samples of FencedLock and TransactionalFencedWrites (Payments) in its context.

// dev/fenceguard/spring/EnableFencedLocks.java: configuration (begin)
@Configuration
@EnableFencedLocks
@EnableTransactionManagement
class LockingConfig {
    @Bean
    LockClient lockClient(DataSource dataSource) {
        return LockClient.of(FenceGuardJdbc.builder(dataSource).build().lockBackend());
    }
}
// dev/fenceguard/spring/EnableFencedLocks.java: configuration (end)
