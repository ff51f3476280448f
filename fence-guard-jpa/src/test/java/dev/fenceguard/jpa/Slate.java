package dev.fenceguard.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A test entity whose tombstone Hibernate's flush would write (no {@code updatable = false}): refused as a fenced entity. */
@Entity
@Table(name = "slates")
public class Slate {
    @Id
    Long id;
    @Fence
    @Column(updatable = false)
    Long fence;
    @Tombstone
    Boolean gone;

    protected Slate() {}

    static final String DDL = "CREATE TABLE slates (id BIGINT PRIMARY KEY, fence BIGINT, gone BOOLEAN)";
}
