package dev.fenceguard.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A test entity storing the fence as 15-digit text, {@code STRICTLY_NEWER}: {@code tickets (id BIGINT, note TEXT NOT NULL, fence CHAR(15), gone BOOLEAN)}. */
@Entity
@Table(name = "tickets")
public class Ticket {
    @Id
    Long id;
    @Column(nullable = false)
    String note;
    @Fence(policy = dev.fenceguard.core.FencePolicy.STRICTLY_NEWER)
    @Column(updatable = false)
    String fence;
    @Tombstone
    @Column(updatable = false)
    boolean gone;

    protected Ticket() {}

    static final String DDL = "CREATE TABLE tickets (id BIGINT PRIMARY KEY, note TEXT NOT NULL, fence CHAR(15), gone BOOLEAN NOT NULL DEFAULT FALSE)";
}
