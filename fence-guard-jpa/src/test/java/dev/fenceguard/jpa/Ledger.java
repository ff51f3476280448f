package dev.fenceguard.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A test entity whose fence Hibernate's flush would write (no {@code updatable = false}): refused as a fenced entity. */
@Entity
@Table(name = "ledgers")
public class Ledger {
    @Id
    Long id;
    @Fence
    Long fence;

    protected Ledger() {}

    static final String DDL = "CREATE TABLE ledgers (id BIGINT PRIMARY KEY, fence BIGINT)";
}
