package dev.fenceguard.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A test entity with a fence and a tombstone, no version: {@code shipments (id TEXT, status TEXT, items INT, fence_token BIGINT, deleted BOOLEAN)}. */
@Entity
@Table(name = "shipments")
public class Shipment {
    @Id
    String id;
    String status;
    @Column(nullable = false)
    int items;
    @Fence
    @Column(name = "fence_token", updatable = false)
    Long fenceToken;
    @Tombstone
    @Column(updatable = false)
    Boolean deleted;

    protected Shipment() {}

    Shipment(String id, String status) {
        this.id = id;
        this.status = status;
    }

    static final String DDL = "CREATE TABLE shipments (id TEXT PRIMARY KEY, status TEXT, items INT NOT NULL DEFAULT 0, "
            + "fence_token BIGINT, deleted BOOLEAN)";
}
