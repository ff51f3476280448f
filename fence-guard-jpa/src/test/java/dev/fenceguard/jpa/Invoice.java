package dev.fenceguard.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** A test entity with both a fence and a {@code @Version}: {@code invoices (id BIGINT, amount INT, fence BIGINT, version BIGINT)}. */
@Entity
@Table(name = "invoices")
public class Invoice {
    @Id
    Long id;
    @Column(nullable = false)
    int amount;
    @Fence
    @Column(nullable = false, updatable = false)
    long fence;
    @Version
    Long version;

    protected Invoice() {}

    Invoice(long id, int amount) {
        this.id = id;
        this.amount = amount;
    }

    static final String DDL = "CREATE TABLE invoices (id BIGINT PRIMARY KEY, amount INT NOT NULL, fence BIGINT NOT NULL DEFAULT 0, "
            + "version BIGINT)";
}
