package dev.fenceguard.examples.boot;

import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.Arrays;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A small payment service on the fence-guard starter: {@code POST /orders/{id}/pay} charges a card
 * through a gateway and marks the order paid, under a lock on the order, with the lease's fence on the
 * write and an idempotency key that names the operation. A worker paused past its lease (the
 * "zombie") is refused at the database and does not charge twice.
 *
 * <pre>
 * ./mvnw -q -pl examples-spring-boot -am -DskipTests package exec:java     # embedded PostgreSQL, port 8080
 * curl -X POST 'localhost:8080/orders/42/pay?worker=A&amp;amountCents=4200'
 * curl localhost:8080/orders/42
 * </pre>
 *
 * Without {@code spring.datasource.url} (argument, system property or {@code SPRING_DATASOURCE_URL}),
 * it starts an embedded PostgreSQL.
 */
@SpringBootApplication
public class PaymentApplication {

    public static void main(String[] args) {
        application(args).run(args);
    }

    /** The application, with an embedded PostgreSQL as the default DataSource when none is configured. */
    static SpringApplication application(String[] args) {
        SpringApplication app = new SpringApplication(PaymentApplication.class);
        boolean configured = System.getProperty("spring.datasource.url") != null || System.getenv("SPRING_DATASOURCE_URL") != null
                || Arrays.stream(args).anyMatch(a -> a.startsWith("--spring.datasource.url="));
        if (!configured) {
            app.setDefaultProperties(Map.of("spring.datasource.url", TestPostgres.embedded().jdbcUrl()));
        }
        return app;
    }

    /** The orders table, guarded by its fence column. */
    @Bean
    FencedTable ordersTable(org.springframework.core.env.Environment env) {
        String schema = env.getProperty("fence-guard.jdbc.schema", "public");
        return FencedTable.builder(schema, "orders", "id", "fence_token").build();
    }

    @Bean
    PaymentGateway paymentGateway() {
        return new PaymentGateway();
    }
}
