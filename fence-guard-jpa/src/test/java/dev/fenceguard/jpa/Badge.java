package dev.fenceguard.jpa;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.util.HashSet;
import java.util.Set;

/** A test entity with a fence, a {@code @Version} and an element collection: {@code badges (id TEXT, status TEXT, fence_token BIGINT, version BIGINT)}, {@code badge_tags (badge_id, tag)}. */
@Entity
@Table(name = "badges")
public class Badge {
    @Id
    String id;
    String status;
    @Fence
    @Column(name = "fence_token", updatable = false)
    Long fenceToken;
    @Version
    Long version;
    @ElementCollection
    @CollectionTable(name = "badge_tags", joinColumns = @JoinColumn(name = "badge_id"))
    @Column(name = "tag")
    Set<String> tags = new HashSet<>();

    protected Badge() {}

    static final String DDL = "CREATE TABLE badges (id TEXT PRIMARY KEY, status TEXT, fence_token BIGINT, version BIGINT NOT NULL DEFAULT 0)";
    static final String TAGS_DDL = "CREATE TABLE badge_tags (badge_id TEXT NOT NULL REFERENCES badges (id), tag TEXT NOT NULL)";
}
