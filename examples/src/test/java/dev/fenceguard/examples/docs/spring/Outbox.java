package dev.fenceguard.examples.docs.spring;

import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** The samples' outbox: a row of {@code public.outbox} per event, written in the caller's Spring transaction. */
class Outbox {

    /** The event the samples add when an order ships. */
    record Shipped(long orderId) {}

    private final JdbcTemplate jdbc;

    Outbox(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
    }

    void add(Shipped event) {
        jdbc.update("INSERT INTO public.outbox (order_id) VALUES (?)", event.orderId());
    }
}
