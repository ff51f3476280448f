package dev.fenceguard.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A test entity with an embeddable, which no fenced statement can carry: {@code cranes (id BIGINT, label TEXT, aisle TEXT, bay INT, fence BIGINT)}. */
@Entity
@Table(name = "cranes")
public class Crane {
    @Id
    Long id;
    String label;
    @Embedded
    Spot spot;
    @Fence
    @Column(updatable = false)
    Long fence;

    protected Crane() {}

    /** Where a crane stands. */
    @Embeddable
    public static class Spot {
        String aisle;
        int bay;
    }

    static final String DDL = "CREATE TABLE cranes (id BIGINT PRIMARY KEY, label TEXT, aisle TEXT, bay INT NOT NULL DEFAULT 0, fence BIGINT)";
}
