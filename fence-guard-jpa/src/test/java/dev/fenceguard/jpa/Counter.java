package dev.fenceguard.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** The zombie storm's counter: {@code counters (id TEXT, n BIGINT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)}. */
@Entity
@Table(name = "counters")
public class Counter {
    @Id
    String id;
    @Column(nullable = false)
    long n;
    @Fence
    @Column(name = "fence_token", nullable = false, updatable = false)
    long fenceToken;

    protected Counter() {}

    static final String DDL = "CREATE TABLE counters (id TEXT PRIMARY KEY, n BIGINT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)";
}
