package dev.fenceguard.examples.docs.spring;

import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.spring.boot.autoconfigure.FencePurges;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@link FencePurges} samples of its Javadoc and of docs/spring-boot.md: the targets of the scheduled purge. */
final class PurgeConfig {

    private PurgeConfig() {}

    static final FencedTable ORDERS = FencedTable.builder("public", "boot_purge_orders", "id", "fence_token").withKeyType(Long.class)
            .withTombstoneColumn("fence_deleted").withHorizon(Duration.ofDays(7)).build();
    static final FencedTable PAYMENTS = FencedTable.builder("public", "boot_purge_payments", "id", "fence_token").withKeyType(Long.class)
            .withTombstoneColumn("fence_deleted").withHorizon(Duration.ofDays(7)).build();

    /** FencePurges' Javadoc: two tables. */
    @Configuration(proxyBeanMethods = false)
    static class TwoTables {
        // dev/fenceguard/spring/boot/autoconfigure/FencePurges.java: bean (begin)
        @Bean
        FencePurges fencePurges(DataSource dataSource) {
            return FencePurges.of("orders", ORDERS.on(dataSource)::purge)       // a FencedTable built withHorizon
                    .and("payments", PAYMENTS.on(dataSource)::purge);
        }
        // dev/fenceguard/spring/boot/autoconfigure/FencePurges.java: bean (end)
    }

    /** docs/spring-boot.md: one table. */
    @Configuration(proxyBeanMethods = false)
    static class OneTable {
        // docs/spring-boot.md: purge targets (begin)
        @Bean
        FencePurges orderPurges(DataSource dataSource) {
            return FencePurges.of("orders", ORDERS.on(dataSource)::purge);   // ORDERS: a FencedTable built withHorizon
        }
        // docs/spring-boot.md: purge targets (end)
    }
}
