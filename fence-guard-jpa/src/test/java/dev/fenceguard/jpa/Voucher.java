package dev.fenceguard.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** A test entity with a fence, a tombstone and a {@code @Version}: {@code vouchers (id TEXT, status TEXT, items INT, fence_token BIGINT, deleted BOOLEAN, version BIGINT)}. */
@Entity
@Table(name = "vouchers")
public class Voucher {
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
    @Version
    Long version;

    protected Voucher() {}

    static final String DDL = "CREATE TABLE vouchers (id TEXT PRIMARY KEY, status TEXT, items INT NOT NULL DEFAULT 0, "
            + "fence_token BIGINT, deleted BOOLEAN, version BIGINT NOT NULL DEFAULT 0)";
}
