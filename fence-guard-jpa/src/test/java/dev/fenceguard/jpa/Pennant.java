package dev.fenceguard.jpa;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.Table;
import java.util.HashSet;
import java.util.Set;

/** A test entity with a fence and an element collection, no version: {@code pennants (id TEXT, status TEXT, fence_token BIGINT)}, {@code pennant_tags (pennant_id, tag)}. */
@Entity
@Table(name = "pennants")
public class Pennant {
    @Id
    String id;
    String status;
    @Fence
    @Column(name = "fence_token", updatable = false)
    Long fenceToken;
    @ElementCollection
    @CollectionTable(name = "pennant_tags", joinColumns = @JoinColumn(name = "pennant_id"))
    @Column(name = "tag")
    Set<String> tags = new HashSet<>();

    protected Pennant() {}

    static final String DDL = "CREATE TABLE pennants (id TEXT PRIMARY KEY, status TEXT, fence_token BIGINT)";
    static final String TAGS_DDL = "CREATE TABLE pennant_tags (pennant_id TEXT NOT NULL REFERENCES pennants (id), tag TEXT NOT NULL)";
}
